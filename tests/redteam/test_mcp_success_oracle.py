"""Attack: use a second MCP session's ``success`` as an answer oracle, then pass first try.

The gold is redacted, but every episode still ends with ``success`` and ``reward``: one bit
per guess about the hidden answer. An agent that can open a side session (``POST
/sessions``) replays the task it was given there with candidate answers (a math task whose
answer is a small integer: a few dozen guesses) until one succeeds, then submits that answer
in the session it was given and passes on its first attempt; the given session's record
shows one clean pass. Success of the attack would mean a served environment pays an agent
that never solved the task. The agent is handed what an operator hands it: its session's
URL and that session's own token (``POST /sessions`` answers it), which opens that endpoint
and nothing else, so there is no side session to probe in.
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


async def _probe(url: str, token: str, task_id: str) -> int | None:
    """The first guess a session calls a success (None: none did)."""
    async with mcp_client(url, token) as client:
        for guess in GUESSES:
            await client.call_tool("gymforge_reset", {"task_id": task_id, "seed": 0})
            r = await client.call_tool("gymforge_submit", {"reply": f"\\boxed{{{guess}}}"})
            if r.structured_content["info"].get("success"):
                return guess
    return None


async def _first_try(url: str, token: str, task_id: str, answer: int) -> dict[str, Any]:
    async with mcp_client(url, token) as client:
        await client.call_tool("gymforge_reset", {"task_id": task_id, "seed": 0})
        r = await client.call_tool("gymforge_submit", {"reply": f"\\boxed{{{answer}}}"})
        return dict(r.structured_content)


def test_a_side_session_is_no_answer_oracle() -> None:
    task_id, gold = _small_integer_task()
    with mcp_server("math", token=TOKEN) as server, http_from() as operator:
        given = open_session(operator, server).json()
        other = open_session(operator, server).json()
        assert given["token"] != other["token"] and TOKEN not in (given["token"], other["token"])
        # the agent holds its session's URL and token, nothing else
        with http_from(token=given["token"]) as agent:
            side = open_session(agent, server)
            print("POST /sessions with the session token:", side.status_code)
            assert side.status_code == 403
            foreign = agent.post(other["url"], json={})
            print("another session's endpoint with the session token:", foreign.status_code)
            assert foreign.status_code == 403
        # an operator's side session still works (the server's token opens any session)
        found = asyncio.run(_probe(other["url"], TOKEN, task_id))
        assert found == gold
        # but the agent's own token cannot reach it: only its own session answers it
        with pytest.raises(Exception):  # noqa: B017 - refused at the HTTP layer
            asyncio.run(_probe(other["url"], given["token"], task_id))
        done = asyncio.run(_first_try(given["url"], given["token"], task_id, gold))
        assert done["info"]["success"] is True  # the session token works where it belongs
