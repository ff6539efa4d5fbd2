"""Attack: leave episodes unfinished so that they are never recorded.

An agent on an MCP server that records (``--record``) starts an episode, explores it with
tool calls, then starts another one over it (``gymforge_reset`` again), or closes its
session mid-episode, or lets the reaper take it. If only finished episodes were written,
every attempt it walked away from would vanish from the record: it could practise on
side sessions and be counted only for the episode it chose to finish. Success of the
attack would mean the record undercounts what the agent tried.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from redteam_mcp import TASK, TOKEN, http_from, mcp_client, mcp_server, open_session, oracle_plan

from gymforge.core.types import ToolCall
from gymforge.trajectory.check import check_file
from gymforge.trajectory.io import read_episodes


async def _explore(url: str, resets: int) -> None:
    first = oracle_plan()[0]
    assert isinstance(first, ToolCall)
    async with mcp_client(url, TOKEN) as client:
        for seed in range(resets):
            await client.call_tool("gymforge_reset", {"task_id": TASK, "seed": seed})
            await client.call_tool(first.name, dict(first.arguments))


def test_every_started_episode_is_recorded(tmp_path: Path) -> None:
    record = tmp_path / "mcp.jsonl"
    with mcp_server(record=record, token=TOKEN, idle_timeout=1.0) as server, http_from() as http:
        closed = open_session(http, server).json()
        asyncio.run(_explore(closed["url"], resets=2))  # the first is abandoned by a reset
        assert http.delete(f"{server.http_url}/sessions/{closed['session']}").status_code == 200
        reaped = open_session(http, server).json()
        asyncio.run(_explore(reaped["url"], resets=1))
        deadline = time.monotonic() + 20
        while server.hub.sessions and time.monotonic() < deadline:  # the reaper takes it
            time.sleep(0.05)
        assert not server.hub.sessions
    ends = [log.end for log in read_episodes(record)] if record.exists() else []
    assert len(ends) == 3, f"3 episodes started, {len(ends)} recorded"
    assert all(e is not None and e.truncated and not e.success for e in ends)
    reasons = sorted(e.failure_reason or "" for e in ends if e is not None)
    assert reasons == ["abandoned", "idle_timeout", "session_closed"], reasons
    assert len(check_file(record, None).episodes) == 3  # a valid trajectory file
