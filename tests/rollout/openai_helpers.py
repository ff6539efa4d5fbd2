"""Helpers for the OpenAI-policy tests (imported by the test modules)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.openai_policy import Retry
from gymforge.testing import ServedReply, ServedToolCall

T = TypeVar("T")


def arun(coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run ``coro`` in a fresh loop with a bounded wait."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


FAST_RETRY = Retry(max_attempts=5, base_delay=0.01, max_delay=0.05, call_timeout=10.0)


def served(action: Action) -> ServedReply:
    """The server reply that makes a policy take ``action``."""
    if isinstance(action, ToolCall):
        return ServedReply(tool_calls=(ServedToolCall(action.name, dict(action.arguments)),))
    assert isinstance(action, Reply)
    return ServedReply(content=action.text)


def ledger_oracle_responder(task_ids: list[str]) -> Callable[[dict[str, Any]], ServedReply]:
    """Plays the ledger oracle's plan for whichever of ``task_ids`` the conversation is
    about (found by its prompt); turn k answers with step k of the plan. Faultless tasks
    (difficulty 1) only: it does not react to tool results."""
    env = LedgerEnv()
    plans: dict[str, list[ServedReply]] = {}
    for task_id in task_ids:
        task = env.tasks.resolve(task_id)
        plan = env.oracle_plan(task)
        assert plan is not None
        plans[task.prompt] = [served(a) for a in plan]

    def respond(request: dict[str, Any]) -> ServedReply:
        messages = request["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        k = sum(m["role"] == "assistant" for m in messages)
        plan = plans[prompt]
        return plan[min(k, len(plan) - 1)]

    return respond


def ledger_replay_oracle(*task_ids: str) -> Callable[[dict[str, Any]], ServedReply]:
    """Plays the ledger oracle for whichever of ``task_ids`` (episode seed 0) the
    conversation is about, at any difficulty: for turn k it replays the oracle's first k
    actions on a fresh environment, so seeded faults happen as they did, and answers with
    the oracle's next action. For a server in another process (``--responder``)."""
    env = LedgerEnv()
    by_prompt = {env.tasks.resolve(t).prompt: t for t in task_ids}
    pool = concurrent.futures.ThreadPoolExecutor(1)  # the server's own loop is running

    async def next_action(task_id: str, turns: int) -> Action:
        replay = LedgerEnv()
        try:
            await replay.reset(task_id, 0)
            for _ in range(turns):
                await replay.step(await replay.oracle_action())
            return await replay.oracle_action()
        finally:
            await replay.close()

    def respond(request: dict[str, Any]) -> ServedReply:
        messages = request["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        turns = sum(m["role"] == "assistant" for m in messages)
        return served(pool.submit(asyncio.run, next_action(by_prompt[prompt], turns)).result())

    return respond


def ledger_oracle_then_hang(
    episodes: str, *task_ids: str
) -> Callable[[dict[str, Any]], ServedReply]:
    """``ledger_replay_oracle``, until it has sent the final reply of ``episodes`` episodes;
    then it hangs (the whole server) on every later request, until the test kills it. So a
    test that kills the server once those episodes are written knows exactly how many
    finished, however slowly the machine lets it poll."""
    oracle = ledger_replay_oracle(*task_ids)
    finals = 0

    def respond(request: dict[str, Any]) -> ServedReply:
        nonlocal finals
        if finals >= int(episodes):
            time.sleep(3600)
        reply = oracle(request)
        if not reply.tool_calls:
            finals += 1  # no tool call: the episode's final reply
        return reply

    return respond
