"""Shared pieces of the harness attacks (``test_harness_*.py``): the accomplice server the
hostile harness reports to, a world-readable copy of the attacker program, and a real run
(``prepare`` + ``run_sync``, the path ``gymforge run`` takes) with it as the policy.

The accomplice listens on a unix socket in the attacker's directory, whose path is on the
harness's command line (so the harness sees it, as it sees any path it is given): a
harness has a network namespace of its own, and nothing on the host's loopback is
reachable from it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socketserver
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from gymforge.rollout.executors import executor_for
from gymforge.rollout.plan import prepare
from gymforge.rollout.runner import RunResult, run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import scripted_responder

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by any uid, standard library only


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


class Accomplice:
    """What the hostile harnesses report (``POST /report``) and a board they use to swap
    URLs (``PUT``/``GET /board/KEY``, ``GET /board``): a stand-in for any outside party
    the harness can talk to, on a world-writable unix socket (``url``: its path)."""

    def __init__(self) -> None:
        self.reports: list[dict[str, Any]] = []
        self.board: dict[str, Any] = {}
        lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n) or b"null")

            def do_POST(self) -> None:
                body = self._body()
                if isinstance(body, dict):  # the runner's open files as the report came in
                    body["runner_fds"] = len(os.listdir("/proc/self/fd"))
                with lock:
                    owner.reports.append(body)
                self._send({"ok": True})

            def do_PUT(self) -> None:
                with lock:
                    owner.board[self.path.rsplit("/", 1)[1]] = self._body()
                self._send({"ok": True})

            def do_GET(self) -> None:
                with lock:
                    self._send(dict(owner.board))

            def log_message(self, *args: Any) -> None:
                pass

        self.dir = Path(tempfile.mkdtemp(prefix="gymforge-redteam-accomplice-"))
        os.chmod(self.dir, 0o755)
        self.url = str(self.dir / "accomplice.sock")
        self.server = _UnixHTTPServer(self.url, Handler)
        os.chmod(self.url, 0o777)  # the harness runs as its own uid
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Accomplice:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def attacker_dir() -> Iterator[Path]:
    """A world-readable directory holding the attacker program (a harness reads its own
    program as its own, unprivileged user)."""
    d = Path(tempfile.mkdtemp(prefix="gymforge-redteam-harness-"))
    try:
        os.chmod(d, 0o755)
        shutil.copyfile(HERE / "harness_attacker.py", d / "attacker.py")
        os.chmod(d / "attacker.py", 0o644)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def attack_command(
    mode: str, accomplice: Accomplice, program: Path, arg: str = "", python: str = SYSTEM_PYTHON
) -> str:
    return f"harness-cmd:{python} {program} {mode} {accomplice.url} {arg}".rstrip()


def run_attack(
    policy: str,
    out: Path,
    *,
    env: str = "ledger",
    n: int = 1,
    replies: tuple[str, ...] = ("I give up.",),
    options: dict[str, Any] | None = None,
    **spec: Any,
) -> RunResult:
    """A real run of ``policy`` on ``env``, the model a scripted test server; ``options``:
    more policy options (``wall_clock_s``...)."""
    with OpenAITestServer(scripted_responder(list(replies))) as upstream:
        run = RunSpec(env=env, policy=policy, n=n, seed=11, out=out, max_retries=0, **spec)
        policy_options = {"base_url": upstream.base_url, **(options or {})}
        ready = prepare(run, policy_options=policy_options)
        try:
            return run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))
        finally:
            if ready.source.close is not None:
                asyncio.run(ready.source.close())


def show(reports: list[dict[str, Any]]) -> None:
    """Print what each harness tried and saw (pytest shows it with ``-s`` or on failure)."""
    for r in reports:
        print(json.dumps(r, indent=1, default=str)[:4000], file=sys.stderr)
