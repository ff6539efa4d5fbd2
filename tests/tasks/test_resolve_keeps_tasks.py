"""``TaskSource.resolve`` keeps the tasks it built: resetting a task again (a rollout group, a
served session, a replay) neither regenerates it nor re-parses its truth, and what it keeps
is exactly what a fresh build gives."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.envs.sql import SqlEnv
from gymforge.tasks.family import TaskFamily
from gymforge.tasks.source import TaskSource


def test_a_second_reset_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[str] = []
    real = TaskFamily.generate

    def counting(self: TaskFamily, params: dict, seed: int, task_id: str | None = None):  # type: ignore[no-untyped-def, type-arg]
        builds.append(str(task_id))
        return real(self, params, seed, task_id)

    monkeypatch.setattr(TaskFamily, "generate", counting)
    env = SqlEnv()
    task_id = SqlEnv.tasks.sample(1, seed=21)[0]

    async def two_resets() -> tuple[str, str]:
        first = await env.reset(task_id, 0)
        truth, built = env.truth, len(builds)
        second = await env.reset(task_id, 0)
        assert len(builds) == built  # not regenerated
        assert env.truth is truth  # not re-parsed
        await env.close()
        return first.model_dump_json(), second.model_dump_json()

    first, second = asyncio.run(two_resets())
    assert first == second


def test_kept_tasks_equal_fresh_builds() -> None:
    source: TaskSource = SqlEnv.tasks
    ids = source.sample(5, seed=4)
    kept = [source.resolve(t) for t in ids]
    fresh = TaskSource(source.families, source.split, source.datasets)
    assert [fresh.resolve(t) for t in ids] == kept
    assert all(source.resolve(t) is k for t, k in zip(ids, kept, strict=True))


def test_the_cache_is_bounded() -> None:
    source: TaskSource = SqlEnv.tasks
    fresh = TaskSource(source.families, source.split, source.datasets)
    for t in source.sample(TaskSource.RESOLVED + 10, seed=8):
        fresh.resolve(t)
    assert len(fresh._resolved) == TaskSource.RESOLVED
