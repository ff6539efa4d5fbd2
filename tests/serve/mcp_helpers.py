"""Helpers of the MCP server tests: the SDK's client on a served session, the oracle's plan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult

from gymforge.core.types import Action, Reply
from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.launch import ServerThread

TASK = "ledger.transfer/v1/d1/s5"
SEED = 3


def open_session(server: ServerThread, token: str | None) -> str:
    """``POST /sessions``: the new session's MCP URL."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    reply = httpx.post(f"{server.http_url}/sessions", headers=headers, timeout=10)
    assert reply.status_code == 201, reply.text
    url: str = reply.json()["url"]
    return url


@asynccontextmanager
async def mcp_client(url: str, token: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


def oracle_plan(task_id: str = TASK) -> list[Action]:
    env = LedgerEnv()
    return env.oracle_plan(env.tasks.resolve(task_id))


async def play(client: Client, plan: list[Action]) -> list[CallToolResult]:
    """Reset, then every action of ``plan`` as a tool call (the reply via gymforge_submit)."""
    results = [await client.call_tool("gymforge_reset", {"task_id": TASK, "seed": SEED})]
    for action in plan:
        if isinstance(action, Reply):
            results.append(await client.call_tool("gymforge_submit", {"reply": action.text}))
        else:
            args: dict[str, Any] = dict(action.arguments)  # type: ignore[union-attr]
            results.append(await client.call_tool(action.name, args))  # type: ignore[union-attr]
    return results
