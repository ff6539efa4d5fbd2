"""Attack: use a second MCP session's ``success`` as an answer oracle, then pass first try.

The gold is redacted, but every episode still ends with ``success`` and ``reward``: one bit
per guess about the hidden answer. An agent holding the server's token opens a side session
(``POST /sessions``), replays the task it was given there with candidate answers (a math
task whose answer is a small integer: a few dozen guesses) until one succeeds, then submits
that answer in the session it was given and passes on its first attempt; the given session's
record shows one clean pass. Success of the attack would mean a served environment pays an
agent that never solved the task. Closing it needs sessions whose credential cannot open
others (an operator token for ``POST /sessions``, a per-session token for its URL), so an
agent handed one session has no side session to probe in; until then it is an expected
failure.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redteam_mcp import TOKEN, http_from, mcp_client, mcp_server, open_session

from gymforge.envs.math.env import MathEnv

GUESSES = range(0, 40)


def _small_integer_task() -> tuple[str, int]:
    env = MathEnv()
    for task_id in env.tasks.sample(400, seed=11):
        gold = env.truth_of(env.tasks.resolve(task_id)).answer
        if gold.isdigit() and int(gold) in GUESSES:
            return task_id, int(gold)
    raise AssertionError("no math task with a small integer answer in 400")


async def _probe(url: str, task_id: str) -> int | None:
    """The first guess the side session calls a success (None: none did)."""
    async with mcp_client(url, TOKEN) as client:
        for guess in GUESSES:
            await client.call_tool("gymforge_reset", {"task_id": task_id, "seed": 0})
            r = await client.call_tool("gymforge_submit", {"reply": f"\\boxed{{{guess}}}"})
            if r.structured_content["info"].get("success"):
                return guess
    return None


async def _first_try(url: str, task_id: str, answer: int) -> dict[str, Any]:
    async with mcp_client(url, TOKEN) as client:
        await client.call_tool("gymforge_reset", {"task_id": task_id, "seed": 0})
        r = await client.call_tool("gymforge_submit", {"reply": f"\\boxed{{{answer}}}"})
        return dict(r.structured_content)


@pytest.mark.xfail(
    strict=True,
    reason="one credential opens every session: a side session's success is an answer "
    "oracle (needs per-session credentials; see the module docstring)",
)
def test_a_side_session_is_no_answer_oracle() -> None:
    task_id, gold = _small_integer_task()
    with mcp_server("math", token=TOKEN) as server, http_from() as http:
        given = open_session(http, server).json()["url"]
        side = open_session(http, server).json()["url"]
        found = asyncio.run(_probe(side, task_id))
        print(task_id, "gold", gold, "found by probing", found)
        passed = False
        if found is not None:
            passed = bool(asyncio.run(_first_try(given, task_id, found))["info"]["success"])
        assert not passed, f"probing a side session found {found}; the given session passed"
