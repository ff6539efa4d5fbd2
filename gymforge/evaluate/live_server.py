"""The HTTP server of ``gymforge view``: loopback only, read only, standard library only.

A background thread polls the run directory every ``interval`` seconds
(:class:`~gymforge.evaluate.follow.RunFollower`); requests read its state. Routes:
``/`` (the page), ``/app.js``, ``/api/state``, ``/api/eval`` (the ``eval.json``-shaped
analysis of the episodes finished so far), ``/api/episodes?after=N``,
``/fragment/overview`` and ``/fragment/episode/I``. Anything else is 404; only GET is
served.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from gymforge.core.errors import UserError
from gymforge.evaluate import live_page
from gymforge.evaluate.follow import RunFollower
from gymforge.serve.binding import binding

LOOPBACK = "127.0.0.1"


class ViewServer:
    """``gymforge view`` for one run directory. Use as a context manager or call
    :meth:`start` / :meth:`stop`; :attr:`url` is set once started."""

    def __init__(
        self, run_dir: str | Path, port: int = 0, interval: float = 1.0, title: str | None = None
    ) -> None:
        path = Path(run_dir)
        if path.exists() and not path.is_dir():
            raise UserError(f"{path} is not a directory (give a run directory)")
        if interval <= 0:
            raise UserError("--interval must be > 0 seconds")
        self.follower = RunFollower(path)
        self.interval = interval
        self.title = title or f"gymforge view: {path.name or path}"
        self.name = path.name or str(path)
        self._stop = threading.Event()
        with binding(LOOPBACK, port):  # a busy or bad --port: one line, as for serve
            self._httpd = ThreadingHTTPServer((LOOPBACK, port), self._handler())
        self._httpd.daemon_threads = True
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def hosts(self) -> set[str]:
        """The Host headers a request may carry: this server's own address."""
        port = self._httpd.server_address[1]
        return {f"{LOOPBACK}:{port}", f"localhost:{port}"}

    def start(self) -> ViewServer:
        self.follower.poll()
        self._threads = [
            threading.Thread(target=self._poll_loop, name="gymforge-view-poll", daemon=True),
            threading.Thread(target=self._httpd.serve_forever, name="gymforge-view", daemon=True),
        ]
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        for t in self._threads:
            t.join(timeout=5)
        self.follower.close()

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.follower.poll()
            except OSError as err:  # the directory vanished or is unreadable: say so, go on
                with self.follower.lock:
                    problems = self.follower.state.problems
                    if len(problems) < 50:
                        problems.append(f"cannot read the run: {err}")

    def _route(self, path: str, query: dict[str, list[str]]) -> tuple[int, str, str]:
        poll_ms = int(self.interval * 1000)
        if path == "/":
            return 200, "text/html", live_page.shell(self.title, poll_ms)
        if path == "/app.js":
            return 200, "text/javascript", live_page.script(poll_ms)
        if path == "/api/state":
            return 200, "application/json", json.dumps(live_page.state_json(self.follower))
        if path == "/api/eval":
            return 200, "application/json", json.dumps(self.follower.document())
        if path == "/api/episodes":
            after = _int(query.get("after", ["0"])[0])
            if after is None:
                return 400, "text/plain", "after must be an integer"
            return (
                200,
                "application/json",
                json.dumps(live_page.episodes_json(self.follower, after)),
            )
        if path == "/fragment/overview":
            return 200, "text/html", live_page.overview(self.follower, self.name)
        if path.startswith("/fragment/episode/"):
            index = _int(path.rsplit("/", 1)[1])
            html = None if index is None else live_page.episode_fragment(self.follower, index)
            if html is None:
                return 404, "text/plain", "no such finished episode"
            return 200, "text/html", html
        return 404, "text/plain", "not found"

    def _handler(self) -> Callable[..., BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if self.headers.get("Host") not in server.hosts():
                    # another site's page reaching 127.0.0.1 through DNS rebinding
                    status, kind, body = 421, "text/plain", "unexpected Host header"
                else:
                    status, kind, body = server._route(parts.path, parse_qs(parts.query))
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Security-Policy", live_page.CSP)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return  # the terminal shows the URL, not one line per poll

        return Handler


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
