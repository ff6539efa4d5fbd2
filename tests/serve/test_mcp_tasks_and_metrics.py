"""MCP clients can find task ids, the reset schema's example works, /metrics counts (issue 36).

Over MCP there was no way to list task ids, the example id in ``gymforge_reset``'s schema
(``ledger.transfer@1:…``) answered ``unknown_task``, and ``GET /metrics`` showed resets,
steps and faults at 0 after a played episode.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp_helpers import mcp_client, open_session, oracle_plan
from serve_helpers import TOKEN

from gymforge.core.types import Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread
from gymforge.serve.mcp.launch import McpServerThread

EPISODES = 8


@pytest.fixture
def server() -> Iterator[ServerThread]:
    started = McpServerThread("ledger", ServeConfig(token=TOKEN)).start(20)
    try:
        yield started
    finally:
        started.stop()


async def _call(url: str, name: str, arguments: dict[str, Any]) -> Any:
    async with mcp_client(url, TOKEN) as client:
        return await client.call_tool(name, arguments)


async def _tools(url: str) -> dict[str, Any]:
    async with mcp_client(url, TOKEN) as client:
        return {t.name: t for t in (await client.list_tools()).tools}


def test_gymforge_tasks_samples_ids_by_split_and_family_deterministically(
    server: ServerThread,
) -> None:
    url = open_session(server, TOKEN)
    tasks = LedgerEnv.tasks
    family = sorted(tasks.families)[0]
    args = {"split": "heldout", "family": family, "n": 5, "seed": 7}
    first = asyncio.run(_call(url, "gymforge_tasks", args))
    again = asyncio.run(_call(url, "gymforge_tasks", args))
    assert not first.is_error, first.content
    ids = first.structured_content["task_ids"]
    assert (
        ids == again.structured_content["task_ids"] == tasks.sample(5, 7, "heldout", None, [family])
    )
    assert len(ids) == 5 and all(tasks.resolve(i).family == family for i in ids)
    assert family in first.structured_content["families"]
    other = asyncio.run(_call(url, "gymforge_tasks", {**args, "seed": 8}))
    assert other.structured_content["task_ids"] != ids
    bad = asyncio.run(_call(url, "gymforge_tasks", {"family": "no.such"}))
    assert bad.is_error and bad.structured_content["error"]["code"] == "bad_arguments"
    assert family in bad.structured_content["error"]["message"]


def test_the_reset_schema_example_resolves(server: ServerThread) -> None:
    url = open_session(server, TOKEN)
    schema = asyncio.run(_tools(url))["gymforge_reset"].input_schema
    (example,) = schema["properties"]["task_id"]["examples"]
    assert example in schema["properties"]["task_id"]["description"]
    result = asyncio.run(_call(url, "gymforge_reset", {"task_id": example}))
    assert not result.is_error, result.content
    assert result.structured_content["task_id"] == example


def test_metrics_count_resets_steps_and_faults(server: ServerThread) -> None:
    url = open_session(server, TOKEN)

    (task,) = LedgerEnv.tasks.sample(1, 0, "train", [2])  # a level with injected faults

    async def episodes() -> list[Any]:
        results = []
        async with mcp_client(url, TOKEN) as client:
            for seed in range(EPISODES):
                results.append(
                    await client.call_tool("gymforge_reset", {"task_id": task, "seed": seed})
                )
                for action in oracle_plan(task):
                    if isinstance(action, Reply):
                        args = {"reply": action.text}
                        results.append(await client.call_tool("gymforge_submit", args))
                    else:
                        assert isinstance(action, ToolCall)
                        results.append(await client.call_tool(action.name, dict(action.arguments)))
        return results

    results = asyncio.run(episodes())
    steps = len(results) - EPISODES
    faults = sum("fault" in (r.structured_content.get("info") or {}) for r in results)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    metrics = httpx.get(f"{server.http_url}/metrics", headers=headers, timeout=10).json()
    assert metrics["resets"] == EPISODES
    assert metrics["steps"] == steps > 0
    assert metrics["faults_injected"] == faults > 0
