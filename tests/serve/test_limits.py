"""Capacity limits, the idle reaper (including half-open sockets) and metrics."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from serve_envs import CountingEnv
from serve_helpers import Raw, env_ref
from websockets.exceptions import ConnectionClosed

from gymforge.core.types import ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.client import remote_factory
from gymforge.serve.http import CapacityError
from gymforge.serve.launch import ServerThread

TASK = LedgerEnv.tasks.sample(1, 0, "train")[0]
Start = Callable[..., ServerThread]


def metrics(server: ServerThread) -> dict[str, object]:
    return httpx.get(f"{server.http_url}/metrics").json()  # type: ignore[no-any-return]


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_capacity_limit_gets_a_defined_reply_not_a_hang(start: Start) -> None:
    server = start(max_sessions=2, max_sessions_per_client=2)
    first, second = Raw(server, token=None), Raw(server, token=None)
    try:  # a hang would time out the bounded handshake or read: no clock needed
        with Raw(server, token=None, open_timeout=5) as third:
            assert third.hello["type"] == "error" and third.hello["code"] == "capacity"
            assert third.hello["fatal"] is True
            with pytest.raises(ConnectionClosed) as closed:
                third.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        assert first.ask({"type": "ping"})["type"] == "pong"  # the admitted ones are fine
        with pytest.raises(CapacityError):
            env = remote_factory(server.url)()
            asyncio.run(env.reset(TASK, 0))
    finally:
        first.close()
    wait_for(lambda: server.hub.metrics.sessions_open == 1)
    with Raw(server, token=None) as fourth:  # a freed slot is reusable
        assert fourth.hello["type"] == "hello"
    second.close()
    data = metrics(server)
    assert data["sessions"]["refused_capacity"] == 2  # type: ignore[index]


def test_idle_sessions_are_reaped_and_their_env_released(start: Start) -> None:
    server = start(env_ref("CountingEnv"), idle_timeout=0.4)
    envs = CountingEnv
    before = envs.live()
    with Raw(server, token=None) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        assert envs.live() == before + 1
        reaped = raw.recv(timeout=5)  # no message from us: the reaper speaks
        assert reaped["code"] == "idle_timeout" and reaped["fatal"] is True
        with pytest.raises(ConnectionClosed) as closed:
            raw.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
    wait_for(lambda: envs.live() == before)
    data = metrics(server)
    assert data["sessions"]["reaped"] == 1 and data["sessions"]["open"] == 0  # type: ignore[index]


def test_activity_keeps_a_session_alive(start: Start) -> None:
    """Busy for longer than the idle timeout, never silent for long: a ping every 0.1 s
    against a 2 s timeout, so only a stall 20x the gap (not a busy machine) could reap it."""
    server = start(idle_timeout=2.0)
    with Raw(server, token=None) as raw:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 2.5:
            time.sleep(0.1)
            assert raw.ask({"type": "ping"})["type"] == "pong"
    assert server.hub.metrics.sessions_reaped == 0


def test_half_open_sockets_are_reaped(start: Start) -> None:
    """A client that completes the handshake and then vanishes without a FIN (here: goes
    silent and never reads) must not hold its slot or its environment."""
    server = start(env_ref("CountingEnv"), idle_timeout=0.4, max_sessions=1)
    envs = CountingEnv
    before = envs.live()
    sock = socket.create_connection(("127.0.0.1", server.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    try:
        assert b"101" in sock.recv(4096).split(b"\r\n")[0]
        wait_for(lambda: server.hub.metrics.sessions_open == 1)
        assert envs.live() == before + 1
        wait_for(lambda: server.hub.metrics.sessions_open == 0, timeout=10)
        assert envs.live() == before
        assert server.hub.metrics.sessions_reaped == 1
        with Raw(server, token=None) as raw:  # the only slot is free again
            assert raw.hello["type"] == "hello"
    finally:
        sock.close()


def test_a_hung_environment_call_times_out_and_frees_the_session(start: Start) -> None:
    server = start(env_ref("ExplodingEnv"), request_timeout=0.3)
    before = CountingEnv.live()
    with Raw(server, token=None) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        t0 = time.monotonic()
        reply = raw.ask({"type": "step", "action": {"kind": "reply", "text": "hang"}})
        assert reply["code"] == "timeout" and reply["fatal"] is True
        assert time.monotonic() - t0 >= 0.3  # the server waited out request_timeout, no less
        with pytest.raises(ConnectionClosed) as closed:
            raw.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
    wait_for(lambda: CountingEnv.live() == before and server.hub.metrics.sessions_open == 0)


def test_a_client_that_stops_reading_is_dropped(start: Start) -> None:
    """Requests keep coming but replies are never read: once the socket buffers fill, the
    server's send stalls; past send_timeout the session is dropped and its env released."""
    server = start(env_ref("BigStateEnv"), send_timeout=0.5)
    before = CountingEnv.live()
    with Raw(server, token=None, max_queue=1, close_timeout=1) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        request = json.dumps({"type": "snapshot"})
        with contextlib.suppress(Exception):
            for _ in range(2_000):
                raw.ws.send(request)
                if server.hub.metrics.errors["send_timeout"]:
                    break
        wait_for(lambda: server.hub.metrics.errors["send_timeout"] == 1, timeout=20)
        wait_for(lambda: CountingEnv.live() == before and server.hub.metrics.sessions_open == 0)


async def _until_reaped(server: ServerThread) -> None:
    """Wait (20 s at most) until ``server`` has reaped an idle session and closed it."""
    deadline = time.monotonic() + 20
    m = server.hub.metrics
    while m.sessions_reaped < 1 or m.sessions_open:
        assert time.monotonic() < deadline, "the idle session was never reaped"
        await asyncio.sleep(0.02)


def _reset_after_reap(start: Start, before_reset: Callable[[Any], None]) -> None:
    """Reset, wait until the server reaps the idle session, call ``before_reset(env)``, then
    reset again: answered on a new session, which then steps."""
    # long enough that the new session's reset-then-step never idles out on a loaded machine
    server = start(idle_timeout=2.0)
    env = remote_factory(server.url)()

    async def main() -> None:
        try:
            await env.reset(TASK, 0)
            first = env.session_id
            await _until_reaped(server)
            before_reset(env)
            await env.reset(TASK, 0)
            assert env.session_id != first
            result = await env.step(ToolCall(name="search_customers", arguments={"name": "a"}))
            assert result.observation.messages
        finally:
            await env.close()

    asyncio.run(main())


def test_client_reconnects_on_reset_after_being_reaped(start: Start) -> None:
    _reset_after_reap(start, lambda env: None)


def test_a_reset_whose_session_was_reaped_unseen_reconnects(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client resets on a connection the server has reaped before the client read the
    notice (a loaded machine): the reset is answered on a new session, not raised as the
    old session's loss. The notice is kept unread here by taking the connection for open
    while it exists."""

    def unread_notice(env: Any) -> None:
        chan = type(env._chan)
        monkeypatch.setattr(chan, "usable", property(lambda self: self.ws is not None))

    _reset_after_reap(start, unread_notice)


def test_metrics_json_and_prometheus(start: Start) -> None:
    server = start()
    with Raw(server, token=None) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        for _ in range(3):
            raw.ask({"type": "step", "action": {"kind": "invalid", "raw": "{", "error": "x"}})
        raw.ask("not json")
    data = metrics(server)
    assert data["resets"] == 1 and data["steps"] == 3
    assert data["sessions"]["total"] == 1  # type: ignore[index]
    assert data["errors"]["bad_json"] == 1  # type: ignore[index]
    step = data["latency"]["step"]  # type: ignore[index]
    assert step["count"] == 3 and 0 < step["p50_ms"] <= step["p99_ms"]
    text = httpx.get(f"{server.http_url}/metrics?format=prometheus").text
    assert "# TYPE gymforge_sessions_open gauge" in text
    assert 'gymforge_request_seconds{op="step",quantile="0.99"}' in text
    assert 'gymforge_errors_total{code="bad_json"} 1' in text
    accept = httpx.get(f"{server.http_url}/metrics", headers={"Accept": "text/plain"})
    assert accept.headers["content-type"].startswith("text/plain")
