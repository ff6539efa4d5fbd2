"""Attack: send the server frames its decoder chokes on.

A deeply nested JSON message (``[[[[...]]]]``, or nesting inside a valid-looking step) made
``json.loads`` raise RecursionError, which escaped the session loop and dropped the session
without a close frame; malformed and oversized frames were answered but kept the session.
Success of the attack would mean one frame can raise an unhandled exception in the server
(or leave the peer without a defined close), rather than an error frame and a proper close.
"""

from __future__ import annotations

import json
import time
from collections import Counter

import httpx
import pytest
from redteam_serve import Raw
from websockets.exceptions import ConnectionClosed

from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread

DEEP = 20_000
NESTED_STEP = (
    '{"type": "step", "id": 7, "action": {"kind": "tool_call", "name": "t", "arguments": '
    + '{"a": ' * 5_000
    + "1"
    + "}" * 5_000
    + "}}"
)
JUST_TOO_DEEP = json.dumps({"type": "ping", "x": json.loads("[" * 130 + "]" * 130)})
FRAMES = {
    "nested-list": ("[" * DEEP + "]" * DEEP, "too_deep", 1007),
    "nested-step": (NESTED_STEP, "too_deep", 1007),
    "just-too-deep": (JUST_TOO_DEEP, "too_deep", 1007),
    "not-json": ("{not json", "bad_json", 1007),
    "not-utf8": (b"\xff\xfe{}", "bad_json", 1007),
    "not-an-object": ("[1, 2]", "bad_json", 1007),
    "oversized": ('{"type": "ping", "pad": "' + "x" * 70_000 + '"}', "too_large", 1009),
}


@pytest.fixture(scope="module")
def server() -> ServerThread:
    with ServerThread("ledger", ServeConfig(max_message_bytes=65_536)) as srv:
        yield srv  # type: ignore[misc]


@pytest.mark.parametrize("name", list(FRAMES))
def test_a_bad_frame_gets_an_error_frame_and_a_proper_close(
    server: ServerThread, name: str
) -> None:
    frame, code, close_code = FRAMES[name]
    with Raw(server, token=None) as raw:
        raw.send(frame) if isinstance(frame, str) else raw.ws.send(frame)
        reply = raw.recv()
        assert reply["type"] == "error" and reply["code"] == code, reply
        assert reply["fatal"] is True
        with pytest.raises(ConnectionClosed) as closed:
            raw.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == close_code
    with Raw(server, token=None) as after:  # the server is unharmed
        assert after.ask({"type": "ping"})["type"] == "pong"


def test_errors_and_sessions_are_accounted(server: ServerThread) -> None:
    """Self-contained (it sends the frames itself), so it holds whichever tests of this module
    ran before it in this process, or none (an xdist worker runs only some of them)."""
    metrics = server.hub.metrics
    before = Counter(metrics.errors)
    for frame, _, _ in FRAMES.values():
        with Raw(server, token=None) as raw:
            raw.send(frame) if isinstance(frame, str) else raw.ws.send(frame)
            assert raw.recv()["type"] == "error"
            with pytest.raises(ConnectionClosed):
                raw.recv(timeout=5)
    counted = Counter(metrics.errors)
    counted.subtract(before)
    assert +counted == Counter(code for _, code, _ in FRAMES.values())
    deadline = time.monotonic() + 10
    while metrics.sessions_open:  # every session closed, none left behind
        assert time.monotonic() < deadline, f"{metrics.sessions_open} sessions still open"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (("[" * DEEP + "]" * DEEP).encode(), 400, "too_deep"),
        (JUST_TOO_DEEP.encode(), 400, "too_deep"),
        (b"{not json", 400, "bad_json"),
        (b"[1, 2]", 400, "bad_json"),
    ],
)
def test_http_bodies_are_decoded_within_the_same_bounds(
    server: ServerThread, body: bytes, status: int, code: str
) -> None:
    reply = httpx.post(f"{server.http_url}/tasks/resolve", content=body, timeout=10)
    assert reply.status_code == status, reply.text
    assert reply.json()["error"]["code"] == code
