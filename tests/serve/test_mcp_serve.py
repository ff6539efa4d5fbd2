"""``gymforge serve --mcp``: the SDK's MCP client plays ledger episodes over streamable HTTP
(both protocol eras) and stdio; the recorded trajectories replay; tool errors are isError
results; auth, capacity and idle reaping are the WebSocket server's."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_helpers import TASK, mcp_client, open_session, oracle_plan, play
from mcp_types import CallToolResult
from serve_helpers import TOKEN
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.registry.resolve import make_env
from gymforge.rollout.replay import replay_file
from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread
from gymforge.serve.mcp.launch import McpServerThread
from gymforge.trajectory.io import read_episodes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def start_mcp(tmp_path: Path) -> Iterator[Callable[..., ServerThread]]:
    servers: list[ServerThread] = []

    def make(record: Path | None = None, **config: Any) -> ServerThread:
        server = McpServerThread("ledger", ServeConfig(**config), record=record).start(20)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def _check_played(results: list[CallToolResult], record: Path) -> None:
    last = results[-1].structured_content
    assert last is not None
    assert last["terminated"] and not last["truncated"]
    assert last["info"]["success"] is True
    assert last["reward_components"]["task"] == 1.0
    for r in results:  # every result carries the step's reward facts
        assert r.structured_content is not None
        assert {"reward", "reward_components", "terminated", "truncated"} <= set(
            r.structured_content
        )
        assert not r.is_error
    report = asyncio.run(replay_file(record, make_env))
    assert report.divergence is None
    assert (report.episodes, report.steps) == (1, len(results))
    (log,) = read_episodes(record)
    assert log.end is not None and log.end.success and log.steps[0].task_id == TASK
    recorded = [s.action.model_dump(exclude={"call_id"}) for s in log.steps[1:] if s.action]
    assert recorded == [a.model_dump(exclude={"call_id"}) for a in oracle_plan()]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 era, and the handshake era
def test_sdk_client_plays_ledger_over_http_and_the_trajectory_replays(
    start_mcp: Callable[..., ServerThread], tmp_path: Path, mode: str
) -> None:
    record = tmp_path / "mcp.jsonl"
    server = start_mcp(record=record, token=TOKEN)
    url = open_session(server, TOKEN)
    assert url.startswith(f"{server.http_url}/mcp/")

    async def main() -> list[CallToolResult]:
        async with mcp_client(url, TOKEN, mode) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == [
                "gymforge_tasks",
                "gymforge_reset",
                "gymforge_submit",
                "search_customers",
                "list_accounts",
                "transfer",
            ]
            return await play(client, oracle_plan())

    results = asyncio.run(main())
    server.stop()  # the writer has flushed each episode as it finished; stop anyway
    _check_played(results, record)


def test_sdk_client_plays_ledger_over_stdio(tmp_path: Path) -> None:
    record = tmp_path / "stdio.jsonl"
    cli = ["-m", "gymforge.cli", "serve", "ledger", "--mcp", "--transport", "stdio"]
    params = StdioServerParameters(
        command=sys.executable,
        args=[*cli, "--record", str(record)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )

    async def main() -> list[CallToolResult]:
        async with asyncio.timeout(60), Client(params) as client:
            return await play(client, oracle_plan())

    _check_played(asyncio.run(main()), record)


def test_tool_errors_are_is_error_results_never_protocol_errors(
    start_mcp: Callable[..., ServerThread], tmp_path: Path
) -> None:
    record = tmp_path / "errors.jsonl"
    server = start_mcp(record=record)
    url = open_session(server, None)

    async def main() -> dict[str, CallToolResult]:
        async with mcp_client(url, None) as client:
            out = {"early": await client.call_tool("search_customers", {"name": "a"})}
            out["bad_reset"] = await client.call_tool("gymforge_reset", {"task": TASK})
            out["bad_task"] = await client.call_tool("gymforge_reset", {"task_id": "nope/v1"})
            await client.call_tool("gymforge_reset", {"task_id": TASK, "seed": 1})
            out["bad_args"] = await client.call_tool("search_customers", {"name": 7})
            out["unknown"] = await client.call_tool("drop_tables", {})
            out["not_found"] = await client.call_tool("list_accounts", {"customer_id": "C9"})
            out["end"] = await client.call_tool("gymforge_submit", {"reply": "done"})
            out["after"] = await client.call_tool("gymforge_submit", {"reply": "again"})
            return out

    out = asyncio.run(main())
    assert all(r.is_error for k, r in out.items() if k != "end")
    for r in out.values():  # failed or not, every result carries the reward facts
        assert r.structured_content is not None
        assert {"reward", "reward_components", "terminated", "truncated"} <= set(
            r.structured_content
        )
    after = out["after"].structured_content
    assert after is not None and after["terminated"] and after["reward"] == 0.0

    def code(key: str) -> str:
        content = out[key].structured_content
        assert content is not None
        return str(content["error"]["code"])

    assert code("early") == "episode_state" and code("after") == "episode_state"
    assert code("bad_reset") == "bad_arguments"
    assert code("bad_task") == "unknown_task"

    def tool_error(key: str) -> str:  # a failed tool call is still a step of the episode
        content = out[key].structured_content
        assert content is not None and content["step"] >= 1
        return str(content["tool_result"]["error"]["kind"])

    assert tool_error("bad_args") == "invalid_arguments"
    assert tool_error("unknown") == "unknown_tool"
    assert tool_error("not_found") == "not_found"
    end = out["end"].structured_content
    assert end is not None and end["terminated"] and end["info"]["success"] is False
    assert asyncio.run(replay_file(record, make_env)).divergence is None


def test_auth_refused_without_and_with_a_wrong_token(
    start_mcp: Callable[..., ServerThread],
) -> None:
    server = start_mcp(token=TOKEN)
    base = server.http_url
    assert httpx.get(f"{base}/health").status_code == 200
    missing = httpx.post(f"{base}/sessions")
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    wrong = httpx.post(f"{base}/sessions", headers={"Authorization": "Bearer wrong-token-xx"})
    assert wrong.status_code == 403
    assert wrong.json()["error"]["code"] == "unauthorized"
    url = open_session(server, TOKEN)  # a session's URL alone does not let anyone in
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong-token-xx"}):
        assert httpx.post(url, json=body, headers=headers).status_code in (401, 403)

    async def refused() -> None:
        async with mcp_client(url, "wrong-token-xx") as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as refusal:  # the SDK's transport task group fails
        asyncio.run(asyncio.wait_for(refused(), 30))
    assert refusal.group_contains(MCPError)  # the HTTP 403 as the SDK reports it
    assert server.hub.metrics.auth_failures >= 5


def test_capacity_per_server_and_per_client(start_mcp: Callable[..., ServerThread]) -> None:
    server = start_mcp(max_sessions=2, max_sessions_per_client=2)
    first, _second = open_session(server, None), open_session(server, None)
    full = httpx.post(f"{server.http_url}/sessions")
    assert full.status_code == 503 and full.json()["error"]["code"] == "capacity"
    session_id = first.rsplit("/", 1)[-1]
    assert httpx.delete(f"{server.http_url}/sessions/{session_id}").status_code == 200
    assert httpx.post(first, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 404
    open_session(server, None)  # the slot was freed
    per_client = start_mcp(max_sessions=8, max_sessions_per_client=1)
    open_session(per_client, None)
    refused = httpx.post(f"{per_client.http_url}/sessions")
    assert refused.status_code == 503 and "per client" in refused.json()["error"]["message"]


def test_idle_sessions_are_reaped_and_release_their_environment(
    start_mcp: Callable[..., ServerThread],
) -> None:
    server = start_mcp(idle_timeout=0.3)
    url = open_session(server, None)  # and never used: nothing here races the reaper
    (session,) = server.hub.sessions.values()
    assert session.env is not None
    deadline = time.monotonic() + 15
    while server.hub.sessions and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not server.hub.sessions and session.env is None  # slot freed, env closed
    assert server.hub.metrics.sessions_reaped == 1
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx.post(url, json=ping).status_code == 404


def test_an_idle_stdio_session_is_reaped_and_the_process_exits() -> None:
    cli = ["-m", "gymforge.cli", "serve", "ledger", "--mcp", "--transport", "stdio"]
    proc = subprocess.Popen(
        [sys.executable, *cli, "--idle-timeout", "0.5"],
        stdin=subprocess.PIPE,  # held open: the client is alive but silent
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.wait(timeout=60) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""  # stdout is the protocol's
    finally:
        if proc.poll() is None:
            proc.kill()
        assert proc.stdin is not None
        proc.stdin.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mcp", "--qa-hooks"], "--qa-hooks is not offered over --mcp"),
        (["--mcp", "--transport", "ws"], "--transport must be http or stdio"),
        (["--transport", "stdio"], "--transport goes with --mcp"),
        (["--mcp", "--seal-key-file", "k"], "--seal-key-file seals the --record file"),
        (["--mcp", "--host", "0.0.0.0"], "refusing to bind 0.0.0.0"),
    ],
)
def test_cli_refuses_bad_mcp_flags_in_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["serve", "ledger", "--port", "0", *args])
    assert result.exit_code == 2 and message in result.output
    assert len(result.output.strip().splitlines()) == 1
