"""Attack: peek at the gold answer in a second MCP session, then pass first try.

An agent given one MCP session URL and the server's token opens another session
(``POST /sessions``), plays the same task there, submits "no idea" and reads the verdict
in the result (``structuredContent.info.verdict.facts.gold``). In the session it was given
it then submits that answer and passes on its first attempt. Success of the attack would
mean an MCP-served environment pays an agent that never solved the task.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gold_peek import shows, task_with_long_gold
from redteam_mcp import TOKEN, http_from, mcp_client, mcp_server, open_session


async def _submit(url: str, task_id: str, reply: str) -> dict[str, Any]:
    async with mcp_client(url, TOKEN) as client:
        await client.call_tool("gymforge_reset", {"task_id": task_id, "seed": 0})
        result = await client.call_tool("gymforge_submit", {"reply": reply})
        return {"structured": result.structured_content, "content": result.model_dump()}


def test_a_side_session_shows_no_gold() -> None:
    task_id, gold = task_with_long_gold()
    with mcp_server("math", token=TOKEN) as server, http_from() as http:
        given = open_session(http, server).json()["url"]
        side = open_session(http, server).json()["url"]
        failed = asyncio.run(_submit(side, task_id, "no idea"))
        assert failed["structured"]["terminated"] is True, failed
        leaked = shows(failed, gold)
        passed = None
        if leaked:  # what the leak buys: the given session passes on its first answer
            won = asyncio.run(_submit(given, task_id, f"\\boxed{{{gold}}}"))
            passed = won["structured"]["info"]["success"]
        assert not leaked, f"the side session showed the gold {gold!r}; first try passed={passed}"
