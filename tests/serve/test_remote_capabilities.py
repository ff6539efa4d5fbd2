"""A served environment's client provides the same capabilities as the environment behind
the server, so QA, eval and red-teaming of a ``ws://`` environment ask it the same way; what
the server withholds (no QA hooks: no oracle, no plan) is missing, with the same error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core.capabilities import (
    BUDGET,
    ORACLE,
    ORACLE_PLAN,
    TASK,
    TASKS,
    TOOLSET,
    Capability,
    require,
    supported,
)
from gymforge.core.errors import UserError
from gymforge.envs.ledger import LedgerEnv
from gymforge.qa_profile import QA
from gymforge.serve.client import remote_factory
from gymforge.serve.launch import ServerThread

Start = Callable[..., ServerThread]


def test_the_client_provides_what_the_served_env_provides(start: Start) -> None:
    server = start(qa_hooks=True)
    env = remote_factory(server.url)()
    local = LedgerEnv()
    served: tuple[Capability[Any], ...] = (TASKS, TASK, ORACLE, ORACLE_PLAN, QA, TOOLSET, BUDGET)
    for cap in served:
        assert supported(env, cap) is not None, cap.name
    tools = require(env, TOOLSET).toolset.tools
    assert {n: t.writes for n, t in tools.items()} == {
        n: t.writes for n, t in local.toolset.tools.items()
    }
    assert require(env, BUDGET).budget == LedgerEnv.budget
    task_id = LedgerEnv.tasks.sample(1, 0)[0]

    async def episode_task() -> object:
        await env.reset(task_id, 0)
        try:
            return require(env, TASK).task
        finally:
            await env.close()

    task = asyncio.run(episode_task())
    assert task is not None and task.task_id == task_id  # type: ignore[attr-defined]
    plan = require(env, ORACLE_PLAN).oracle_plan(LedgerEnv.tasks.resolve(task_id))
    assert plan == local.oracle_plan(LedgerEnv.tasks.resolve(task_id))


def test_without_qa_hooks_the_client_has_no_oracle_and_says_so(start: Start) -> None:
    env = remote_factory(start(qa_hooks=False).url)()
    assert supported(env, ORACLE) is None
    with pytest.raises(UserError, match=r"ledger environment has no oracle"):
        require(env, ORACLE, "the scripted baselines")
