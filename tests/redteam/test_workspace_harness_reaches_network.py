"""A workspace harness tries to reach beyond its two endpoints: a service on the host's
loopback (the test's stand-in for anything the host runs there), the inference server
behind the proxy (its answers would not be recorded), an outside address, and the runner's
working directory. Success would be model calls outside the record, a channel to anything
the host serves, or the runner's files."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from redteam_workspace import the_episode, workspace_attacker
from workspace_helpers import run_workspace

from gymforge.testing.openai_server import OpenAITestServer


@contextmanager
def loopback_service() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"secret-service")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_workspace_harness_reaches_only_its_endpoints(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with loopback_service() as service, OpenAITestServer() as model:
        inference = model.base_url.split("//")[1].split("/")[0]
        with workspace_attacker("network", service, inference) as policy:
            result = run_workspace(policy, out)
    assert not result.errors, result.errors
    _, report = the_episode(out)
    for target, seen in report["reached"].items():
        assert seen.startswith("refused"), (target, seen)
    assert report["own_shell"]["out"] == "still-works\n"  # its own endpoint still works
    listing = report["cwd_listing"]
    assert isinstance(listing, str) or "pyproject.toml" not in listing, listing
