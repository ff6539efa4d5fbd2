"""A tools-mode ``harness-cmd:`` program skips its proxy URL and posts a chat request straight
to the inference server behind it (and to another service on the host's loopback, a
stand-in for a local Redis or database). Success would be model calls outside the record
(tokens the proxy never saw, so a trajectory whose recorded turns are not what the agent
was given), and a channel to anything the host serves on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show

from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import scripted_responder
from gymforge.trajectory.io import read_episodes


@contextmanager
def loopback_service() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"secret-service")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_tools_mode_harness_reaches_only_its_endpoints(tmp_path: Path) -> None:
    with (
        OpenAITestServer(scripted_responder(["direct", "proxied"])) as model,
        loopback_service() as service,
        Accomplice() as acc,
        attacker_dir() as d,
    ):
        direct = model.base_url.rstrip("/") + "/chat/completions"
        policy = attack_command("loopback", acc, d / "attacker.py", f"{direct},{service}")
        result = run_attack(policy, tmp_path, options={"base_url": model.base_url})
        show(acc.reports)
        served = len(model.requests)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert "crashed" not in report, report
    for url, (status, body) in report["reached"].items():
        assert status == -1, (url, status, body)  # no connection at all
    assert report["own_proxy"][0] == 200, report["own_proxy"]  # its own endpoint still works
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    turns = [t for s in log.steps[1:] for t in (s.policy.model_turns or [])]  # type: ignore[union-attr]
    assert served == len(turns) == 1  # every model call the server served is a recorded turn
