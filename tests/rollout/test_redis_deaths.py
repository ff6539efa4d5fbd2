"""``redis_deaths``: whose failure a Redis task is when its workers keep dying, without a
server (the rule, the mark, the probe's episode); the run against a real one is
``tests/redteam/test_redis_worker_death_escapes_red20.py``."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.core.errors import POLICY_STOP_REASONS, WORKER_DIED_ON_ACTION, WorkerDiedOnAction
from gymforge.core.types import ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.episode import run_episode
from gymforge.rollout.executors.redis_deaths import StoppedPolicy, died_on_action, mark_first_step
from gymforge.rollout.jobs import expand
from gymforge.rollout.scripted import scripted_policy


@pytest.mark.parametrize(
    ("handed", "acted", "agents"),
    [(4, 3, True), (4, 4, True), (4, 2, False), (4, 0, False), (1, 0, False), (2, 1, True)],
)
def test_only_takers_that_all_died_after_the_agent_acted_blame_it(
    handed: int, acted: int, agents: bool
) -> None:
    assert died_on_action(handed, acted) is agents


def test_the_mark_comes_once_before_the_first_step() -> None:
    env = LedgerEnv()
    [task] = LedgerEnv.tasks.sample(1, 0)
    events: list[str] = []

    async def mark() -> None:
        events.append("mark")

    async def main() -> None:
        await env.reset(task, 0)
        mark_first_step(env, mark)
        assert events == []  # the reset is no action
        await env.step(ToolCall(name="no_such_tool"))  # an error answered; the episode goes on
        await env.step(ToolCall(name="no_such_tool"))

    asyncio.run(main())
    assert events == ["mark"]


def test_the_probe_ends_the_episode_counted_at_its_reset() -> None:
    """The episode the probe plays: the job's reset and no step, truncated, a failure whose
    reason is the policy's stop (so the trajectory reader accepts it); the policy's identity
    kept, the policy never asked."""
    [job] = expand([(LedgerEnv.tasks.sample(1, 0)[0], 3)])
    env, policy = LedgerEnv(), StoppedPolicy(scripted_policy("oracle")())
    records = asyncio.run(run_episode(env, policy, job.keys("run", env, policy)))
    end = records[-1]
    assert [(r["record"], r.get("step")) for r in records] == [("step", 0), ("episode", None)]
    assert (end["steps"], end["success"], end["truncated"], end["reward"]) == (0, False, True, 0)
    assert end["failure_reason"] == WORKER_DIED_ON_ACTION in POLICY_STOP_REASONS
    assert end["policy_checkpoint"] == policy.checkpoint
    assert WorkerDiedOnAction().reason == WORKER_DIED_ON_ACTION
