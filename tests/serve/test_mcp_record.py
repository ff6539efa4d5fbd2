"""``gymforge serve --mcp --record``: an episode open at shutdown is written with reason
``server_shutdown``; a sealed record is continued by the next server under the same key
and verifies; a file is never mixed sealed and unsealed; the caps' client identity."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from mcp_helpers import TASK, mcp_client, open_session, oracle_plan, play

from gymforge.core.errors import POLICY_STOP_REASONS, SERVED_STOP_REASONS, UserError
from gymforge.serve.config import ServeConfig, credential_of, presented_token
from gymforge.serve.launch import ServerThread
from gymforge.serve.mcp.launch import McpServerThread
from gymforge.serve.record import END_REASONS, recorder_for
from gymforge.trajectory.check import check_file
from gymforge.trajectory.io import read_episodes

KEY = b"test-seal-key-0123456789"


async def _reset_only(url: str) -> None:
    async with mcp_client(url, None) as client:
        await client.call_tool("gymforge_reset", {"task_id": TASK, "seed": 0})


async def _play_oracle(url: str) -> None:
    async with mcp_client(url, None) as client:
        await play(client, oracle_plan())


def _serve(record: Path, key: bytes | None) -> ServerThread:
    return McpServerThread("ledger", ServeConfig(), record=record, seal_key=key)


def test_an_episode_open_at_shutdown_is_recorded_and_the_run_sealed(tmp_path: Path) -> None:
    record = tmp_path / "mcp.jsonl"
    with _serve(record, KEY) as server:
        asyncio.run(_play_oracle(open_session(server, None)))
        asyncio.run(_reset_only(open_session(server, None)))
    with _serve(record, KEY) as server:  # a second server continues the sealed file
        asyncio.run(_reset_only(open_session(server, None)))
    ends = [log.end for log in read_episodes(record)]
    assert [(e.success, e.failure_reason) for e in ends if e is not None] == [
        (True, None),
        (False, "server_shutdown"),
        (False, "server_shutdown"),
    ]
    check = check_file(record, KEY)
    assert check.finished and check.sealed and check.run_seals == 2, check


def test_a_file_is_never_mixed_sealed_and_unsealed(tmp_path: Path) -> None:
    record = tmp_path / "mcp.jsonl"
    with _serve(record, None) as server:
        asyncio.run(_play_oracle(open_session(server, None)))
    with pytest.raises(UserError, match="unsealed"):
        recorder_for(record, KEY)
    sealed = tmp_path / "sealed.jsonl"
    with _serve(sealed, KEY) as server:
        asyncio.run(_play_oracle(open_session(server, None)))
    with pytest.raises(UserError, match="sealed"):
        recorder_for(sealed, None)


def test_a_token_is_one_client_however_it_is_spelled() -> None:
    for header in ("Bearer T0k", "bearer T0k", "  BEARER \t T0k  "):
        assert presented_token(header) == "T0k"
        assert credential_of(header, "T0k") == "T0k"
    assert presented_token("Basic T0k") is None and presented_token("Bearer") is None
    assert credential_of("Bearer anything", None) == ""  # no server token: the header is moot


def test_a_flood_of_handshakes_is_refused_on_its_own_session_only(tmp_path: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with McpServerThread("ledger", ServeConfig(max_sessions=4, max_sessions_per_client=4)) as s:
        flooded, other = open_session(s, None), open_session(s, None)
        codes = [httpx.post(flooded, json=init, headers=accept).status_code for _ in range(6)]
        assert codes == [200] * 4 + [503] * 2
        assert httpx.post(other, json=init, headers=accept).status_code == 200
        session_id = flooded.rsplit("/", 1)[-1]
        assert httpx.delete(f"{s.http_url}/sessions/{session_id}").status_code == 200
        assert httpx.post(flooded, json=init, headers=accept).status_code == 404


def test_every_end_reason_is_one_the_trajectory_check_accepts() -> None:
    assert set(END_REASONS) == SERVED_STOP_REASONS
    assert SERVED_STOP_REASONS <= POLICY_STOP_REASONS
