"""The message protocol: defined error replies for every kind of bad input, sessions that
survive them, replies that validate against the published JSON Schema, and env errors."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from jsonschema import Draft202012Validator
from serve_helpers import TOKEN, Raw, env_ref
from websockets.exceptions import ConnectionClosed

from gymforge.core.errors import EpisodeStateError, UnknownTaskError
from gymforge.core.types import Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.client import remote_factory
from gymforge.serve.http import RemoteEnvError
from gymforge.serve.launch import ServerThread

TASK = LedgerEnv.tasks.sample(1, 0, "train")[0]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def schema(server: ServerThread) -> dict[str, object]:
    return httpx.get(f"{server.http_url}/schema", headers=AUTH).json()  # type: ignore[no-any-return]


def test_schema_describes_protocol_and_trajectories(ledger_server: ServerThread) -> None:
    data = schema(ledger_server)
    assert data["protocol"] == 1
    assert {"client_message", "server_message", "trajectory", "close_codes", "error_codes"} <= set(
        data
    )
    assert {"4408", "1008", "1013"} <= set(data["close_codes"])  # type: ignore[arg-type]


def test_replies_validate_against_the_published_schema(ledger_server: ServerThread) -> None:
    data = schema(ledger_server)
    client = Draft202012Validator(data["client_message"])  # type: ignore[arg-type]
    server = Draft202012Validator(data["server_message"])  # type: ignore[arg-type]
    call = ToolCall(name="search_customers", arguments={"name": "a"}).model_dump(mode="json")
    messages = [
        {"type": "reset", "task_id": TASK, "seed": 3, "state": True, "id": 1},
        {"type": "step", "action": call, "state": True, "id": 2},
        {"type": "snapshot", "id": 3},
        {"type": "oracle_action", "id": 4},
        {"type": "step", "action": {"kind": "bogus"}, "id": 5},
        {"type": "ping", "id": "last"},
    ]
    with Raw(ledger_server) as raw:
        assert not list(server.iter_errors(raw.hello))
        for message in messages:
            if message["id"] != 5:
                assert not list(client.iter_errors(message)), message
            reply = raw.ask(message)
            assert reply["id"] == message["id"]
            errors = [e.message[:200] for e in server.iter_errors(reply)]
            assert not errors, (reply["type"], errors)


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ('{"type": "teleport"}', "unknown_type"),
        ('{"no_type": 1}', "bad_message"),
        ('{"type": "reset", "task_id": 5}', "bad_message"),
        ('{"type": "step", "action": {"kind": "tool_call"}}', "bad_message"),
        ('{"type": "step", "action": {"kind": "reply", "text": "hi"}}', "episode_state"),
        ('{"type": "snapshot"}', "episode_state"),
        ('{"type": "oracle_action"}', "episode_state"),
        ('{"type": "policy_act"}', "episode_state"),
        ('{"type": "policy_start", "case": "nope", "task_id": "t", "seed": 0}', "unsupported"),
        ('{"type": "reset", "task_id": "no/such/task", "seed": 0}', "unknown_task"),
    ],
)
def test_bad_input_gets_an_error_reply_and_the_session_survives(
    ledger_server: ServerThread, frame: str, code: str
) -> None:
    with Raw(ledger_server) as raw:
        reply = raw.ask(frame)
        assert reply["type"] == "error" and reply["code"] == code, reply
        assert reply["fatal"] is False and reply["message"]
        assert raw.ask({"type": "ping"})["type"] == "pong"
        assert raw.ask({"type": "reset", "task_id": TASK, "seed": 0})["type"] == "reset_result"


@pytest.mark.parametrize("frame", ["{not json", "[1, 2]", "[" * 5000 + "]" * 5000])
def test_a_frame_that_is_no_message_gets_a_fatal_error_and_a_close(
    ledger_server: ServerThread, frame: str
) -> None:
    with Raw(ledger_server) as raw:
        reply = raw.ask(frame)
        assert reply["type"] == "error" and reply["code"] in ("bad_json", "too_deep"), reply
        assert reply["fatal"] is True and reply["message"]
        with pytest.raises(ConnectionClosed) as closed:
            raw.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007


def test_binary_frames_are_accepted_as_utf8_json(ledger_server: ServerThread) -> None:
    with Raw(ledger_server) as raw:
        raw.ws.send(json.dumps({"type": "ping", "id": 1}).encode())
        assert raw.recv() == {"type": "pong", "id": 1}


def test_oversize_message_gets_too_large_and_a_close(start: object) -> None:
    server = start(max_message_bytes=4096)  # type: ignore[operator]
    huge = {"type": "step", "action": {"kind": "reply", "text": "x" * 5000}}
    multibyte = {"type": "step", "action": {"kind": "reply", "text": "é" * 2100}}
    for frame in (json.dumps(huge), json.dumps(multibyte, ensure_ascii=False)):
        with Raw(server, token=None) as raw:
            raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
            reply = raw.ask(frame)
            assert reply["type"] == "error" and reply["code"] == "too_large", reply
            assert "4096" in reply["message"] and reply["fatal"] is True
            with pytest.raises(ConnectionClosed) as closed:
                raw.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with Raw(server, token=None) as raw:  # a message under the cap is processed
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        step = raw.ask({"type": "step", "action": {"kind": "reply", "text": "done"}})
        assert step["type"] == "step_result" and step["terminated"] is True
        with pytest.raises(ConnectionClosed) as closed:  # past the transport's hard cap
            raw.ask("x" * (4 * 4096 + 1))
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    metrics = httpx.get(f"{server.http_url}/metrics").json()
    assert metrics["errors"]["too_large"] == 2


def test_http_bodies_are_limited(start: object) -> None:
    server = start(max_message_bytes=2048)  # type: ignore[operator]
    reply = httpx.post(f"{server.http_url}/tasks/resolve", content=b"{" + b" " * 4096 + b"}")
    assert reply.status_code == 413 and reply.json()["error"]["code"] == "too_large"


def test_environment_exceptions_become_error_replies(start: object) -> None:
    server = start(env_ref("ExplodingEnv"))  # type: ignore[operator]
    with Raw(server, token=None) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        boom = raw.ask({"type": "step", "action": {"kind": "reply", "text": "boom"}})
        assert boom["code"] == "env_error" and "exploded" in boom["message"]
        assert raw.ask({"type": "reset", "task_id": TASK, "seed": 0})["type"] == "reset_result"
        nan = raw.ask({"type": "step", "action": {"kind": "reply", "text": "nan"}})
        assert nan["code"] == "env_error" and "JSON" in nan["message"], nan
        assert raw.ask({"type": "ping"})["type"] == "pong"


def test_client_maps_errors_to_the_local_exceptions(ledger_server: ServerThread) -> None:
    env = remote_factory(ledger_server.url, TOKEN)()

    async def main() -> None:
        try:
            with pytest.raises(EpisodeStateError):
                await env.snapshot()  # no session yet: nothing to snapshot
            with pytest.raises(UnknownTaskError):
                await env.reset("ledger.transfer/v9/d1/s1", 0)
            await env.reset(TASK, 0)
            with pytest.raises(EpisodeStateError):  # after the end, as locally
                await env.step(Reply(text="done"))
                await env.step(Reply(text="again"))
            await env.reset(TASK, 0)  # the same session lives on
            assert env.session_id is not None
        finally:
            await env.close()
        with pytest.raises(EpisodeStateError, match="closed"):
            await env.reset(TASK, 0)

    asyncio.run(main())


def test_remote_env_error_is_an_infra_error(start: object) -> None:
    server = start(env_ref("ExplodingEnv"))  # type: ignore[operator]
    env = remote_factory(server.url)()

    async def main() -> None:
        try:
            await env.reset(TASK, 0)
            with pytest.raises(RemoteEnvError, match="exploded"):
                await env.step(Reply(text="boom"))
        finally:
            await env.close()

    asyncio.run(main())
