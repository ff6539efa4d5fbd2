"""``TaskSource.resolve`` hands back a task it built while anything holds it: resetting a task
again while it is in use (a rollout group, a served session, a replay) neither regenerates it
nor re-parses its truth, what it hands back is exactly what a fresh build gives, and it keeps
no task alive itself (a dropped task is freed at once, not long after, cold)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from gymforge.envs.sql import SqlEnv
from gymforge.tasks.family import TaskFamily
from gymforge.tasks.source import TaskSource


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ids of the tasks generated while the test runs."""
    made: list[str] = []
    real = TaskFamily._generate  # what ``generate`` and ``task`` (a task id's draw) both call

    def counting(self: TaskFamily, params: dict, seed: int, task_id: str | None, drawn: bool):  # type: ignore[no-untyped-def, type-arg]
        made.append(str(task_id))
        return real(self, params, seed, task_id, drawn)

    monkeypatch.setattr(TaskFamily, "_generate", counting)
    yield made


def fresh_source() -> TaskSource:
    source: TaskSource = SqlEnv.tasks
    return TaskSource(source.families, source.split, source.datasets)


def test_a_second_reset_builds_nothing(builds: list[str]) -> None:
    env = SqlEnv()
    task_id = SqlEnv.tasks.sample(1, seed=21)[0]

    async def two_resets() -> tuple[str, str]:
        first = await env.reset(task_id, 0)
        truth = env.truth
        second = await env.reset(task_id, 0)
        assert builds == [task_id]  # not regenerated
        assert env.truth is truth  # not re-parsed
        await env.close()
        return first.model_dump_json(), second.model_dump_json()

    first, second = asyncio.run(two_resets())
    assert first == second


def test_a_group_on_several_environments_shares_one_task(builds: list[str]) -> None:
    """Rollouts of a group run on environments of a pool: while one of them holds the task,
    the others' resets are handed the same task object."""
    envs = [SqlEnv() for _ in range(3)]
    task_id = SqlEnv.tasks.sample(1, seed=22)[0]

    async def group() -> None:
        for env in envs:
            await env.reset(task_id, 0)

    asyncio.run(group())
    assert builds == [task_id]
    assert envs[1].task is envs[0].task and envs[2].task is envs[0].task
    assert envs[2].truth is envs[0].truth


def test_kept_tasks_equal_fresh_builds() -> None:
    source: TaskSource = SqlEnv.tasks
    ids = source.sample(5, seed=4)
    kept = [source.resolve(t) for t in ids]
    assert [fresh_source().resolve(t) for t in ids] == kept
    assert all(source.resolve(t) is k for t, k in zip(ids, kept, strict=True))


@pytest.mark.usefixtures("young_heap")
def test_a_dropped_task_is_freed_and_built_again(builds: list[str]) -> None:
    source = fresh_source()
    task_id = source.sample(1, seed=9)[0]
    task = source.resolve(task_id)
    dumped = task.model_dump_json()
    gone = weakref.ref(task)
    del task
    gc.collect()
    assert gone() is None  # the source held it only weakly
    again = source.resolve(task_id)
    assert builds.count(task_id) == 2
    assert again.model_dump_json() == dumped


def test_what_resolve_remembers_is_bounded() -> None:
    source = fresh_source()
    ids = source.sample(TaskSource.BUILT + 10, seed=8)
    for t in ids:
        source.resolve(t)
    assert 0 < len(source._built) <= TaskSource.BUILT
    held = source.resolve(ids[-1])  # still remembered
    assert source.resolve(ids[-1]) is held
