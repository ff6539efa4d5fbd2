"""``redis_deaths``: whose failure a Redis task is when its workers keep dying, without a
server (the rule, the mark, the probe's episode); the run against a real one is
``tests/redteam/test_redis_worker_death_escapes_red20.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gymforge.core.errors import POLICY_STOP_REASONS, WORKER_DIED_ON_ACTION, WorkerDiedOnAction
from gymforge.core.types import Action, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.episode import run_episode
from gymforge.rollout.executors.redis_deaths import (
    StoppedPolicy,
    Takers,
    died_on_action,
    record_steps,
)
from gymforge.rollout.jobs import expand
from gymforge.rollout.scripted import scripted_policy
from tests.rollout.redis_helpers import REDIS_SERVER, redis_server


@pytest.mark.parametrize(
    ("handed", "acted", "agents"),
    [(4, 3, True), (4, 4, True), (4, 2, False), (4, 0, False), (1, 0, False), (2, 1, True)],
)
def test_only_takers_that_all_died_after_the_agent_acted_blame_it(
    handed: int, acted: int, agents: bool
) -> None:
    assert died_on_action(handed, acted) is agents


def test_each_action_is_recorded_before_its_step() -> None:
    env = LedgerEnv()
    [task] = LedgerEnv.tasks.sample(1, 0)
    events: list[str] = []

    async def record(action: Action) -> None:
        events.append(f"record {action.name}")  # type: ignore[union-attr]

    async def main() -> None:
        await env.reset(task, 0)
        record_steps(env, record)
        assert events == []  # the reset is no action
        for name in ("first", "second"):  # errors answered; the episode goes on
            result = await env.step(ToolCall(name=name))
            events.append(f"stepped {len(result.observation.messages)}")

    asyncio.run(main())
    assert [e.split()[0] for e in events] == ["record", "stepped", "record", "stepped"]
    assert events[0] == "record first" and events[2] == "record second"


def test_the_probe_replays_the_actions_then_ends_the_episode_counted() -> None:
    """The episode the probe plays: the job's reset, the recorded actions (their steps and
    costs), then its end, truncated, a failure whose reason is the policy's stop (so the
    trajectory reader accepts it); the policy's identity kept, the policy never asked."""
    [job] = expand([(LedgerEnv.tasks.sample(1, 0)[0], 3)])
    env = LedgerEnv()
    actions: list[Action] = [ToolCall(name="no_such_tool")]
    policy = StoppedPolicy(scripted_policy("oracle")(), actions)
    records = asyncio.run(run_episode(env, policy, job.keys("run", env, policy)))
    end = records[-1]
    assert [(r["record"], r.get("step")) for r in records] == [
        ("step", 0),
        ("step", 1),
        ("episode", None),
    ]
    assert records[1]["action"]["name"] == "no_such_tool"
    assert (end["steps"], end["success"], end["truncated"]) == (1, False, True)
    assert end["reward"] == records[1]["reward"] < 0  # the step's costs paid
    assert end["failure_reason"] == WORKER_DIED_ON_ACTION in POLICY_STOP_REASONS
    assert end["policy_checkpoint"] == policy.checkpoint
    assert WorkerDiedOnAction().reason == WORKER_DIED_ON_ACTION


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")
def test_a_probe_that_dies_is_followed_by_a_bare_one_then_the_task_is_given_up(
    tmp_path: Path,
) -> None:
    """Three takers died after acting (the third's actions recorded): the probe replays its
    actions but the last; that probe dying, the next is bare (the job's reset alone); that
    dying too, the task is given up. A taker that died before acting gives it up at once."""
    pytest.importorskip("redis")
    from gymforge.rollout.executors.redis_worker import connect

    lookup, answer = ToolCall(name="lookup"), ToolCall(name="answer")

    async def main() -> list[list[Action] | None]:
        r = connect(url)
        try:
            takers = Takers(r, "t", "1-0", 60)
            for delivery in (1, 2, 3):
                record = takers.recorder(delivery)
                await record(lookup)
                await record(answer)  # the action each died on
            seen = [await takers.probe(4), await takers.probe(5), await takers.probe(6)]
            early = Takers(r, "t", "2-0", 60)
            await early.recorder(1)(lookup)  # the first acted; the second died before
            seen.append(await early.probe(3))
            await r.delete(*takers.keys(6))  # what the ack deletes
            assert not await r.keys("t:taken:1-0:*")
            return seen
        finally:
            await r.aclose()

    with redis_server(tmp_path) as url:
        replayed, bare, given_up, early_given_up = asyncio.run(main())
    assert replayed == [lookup] and bare == [] and given_up is None and early_given_up is None


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")
def test_a_first_taker_that_kept_no_actions_is_not_probed_but_played_on(tmp_path: Path) -> None:
    """A first taker under ``--max-reclaims`` above 0 keeps no actions; a worker under 0
    past it gets ``NOT_KEPT`` (no probe counted) and plays the task as a takeover, whose
    kept actions the next probe replays."""
    pytest.importorskip("redis")
    from gymforge.rollout.executors.redis_deaths import NOT_KEPT, keeps_actions
    from gymforge.rollout.executors.redis_worker import connect

    lookup, answer = ToolCall(name="lookup"), ToolCall(name="answer")

    async def main() -> list[object]:
        r = connect(url)
        try:
            takers = Takers(r, "t", "1-0", 60)
            await takers.recorder(1, keeps_actions(1, 2))(lookup)  # acted, kept nothing
            first = await takers.probe(2)
            record = takers.recorder(2, keeps_actions(2, 0))
            await record(lookup)
            await record(answer)
            return [first, await takers.probe(3)]
        finally:
            await r.aclose()

    with redis_server(tmp_path) as url:
        first, then = asyncio.run(main())
    assert first == NOT_KEPT and then == [lookup]
