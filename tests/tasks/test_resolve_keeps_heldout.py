"""A held-out family task is a copy of the family's own, stamped ``heldout``: ``TaskSource``
keeps that copy for as long as the family's task is alive (a world family's LRU), so a task
reset again after its episode let go of it is handed back as a task not held out is, without
parsing its id and copying it again. What it hands back is exactly the reference: the family's
task, freshly generated, stamped by ``model_copy``; and it is freed with the family's task."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from gymforge.envs.sql import SqlEnv
from gymforge.envs.support_desk.env import SupportDeskEnv
from gymforge.envs.support_desk.truth import DeskTruth
from gymforge.tasks.family import TaskFamily
from gymforge.tasks.source import TaskSource
from gymforge.tasks.truth import vouched
from gymforge.world import tasks as world_tasks

MULTI = "support.multi_issue"


@pytest.fixture
def resolves(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ids a family was asked to resolve while the test runs."""
    asked: list[str] = []
    real = world_tasks.WorldFamily.resolve

    def counting(self: world_tasks.WorldFamily, task_id: str):  # type: ignore[no-untyped-def, type-arg]
        asked.append(task_id)
        return real(self, task_id)

    monkeypatch.setattr(world_tasks.WorldFamily, "resolve", counting)
    yield asked


def desk_source() -> TaskSource:
    source: TaskSource = SupportDeskEnv.tasks
    return TaskSource(source.families, source.split, source.datasets)


def reference(task_id: str) -> str:
    """The task generated afresh (past the world family's LRU) and stamped as ever."""
    family = SupportDeskEnv.tasks.families[MULTI]
    fresh = TaskFamily.resolve(family, task_id)
    return fresh.model_copy(update={"split": "heldout"}).model_dump_json()


def multi_ids(n: int, seed: int) -> list[str]:
    family = SupportDeskEnv.tasks.families[MULTI]
    levels = sorted(family.levels)
    return [family.task_id(levels[i % len(levels)], 7_300_000 + seed + i) for i in range(n)]


@pytest.mark.usefixtures("young_heap")
def test_a_dropped_heldout_task_is_handed_back_as_the_reference(resolves: list[str]) -> None:
    source = desk_source()
    task_id = multi_ids(1, 1)[0]
    first = source.resolve(task_id)
    assert first.split == "heldout"
    dumped = first.model_dump_json()
    assert dumped == reference(task_id)
    gone = weakref.ref(first)
    del first
    gc.collect()
    assert gone() is not None  # kept while the family's task is alive
    again = source.resolve(task_id)
    assert again is gone()
    assert resolves == [task_id]  # the family was asked once: no id parsed, no copy made
    assert again.model_dump_json() == dumped
    # its truth is still the model the family built, and that model is the validated one
    built = vouched(again)
    assert type(built) is DeskTruth
    assert built == DeskTruth.model_validate(again.truth)
    assert SupportDeskEnv().truth_of(again) is built


def test_resets_of_kept_heldout_tasks_equal_fresh_ones() -> None:
    ids = multi_ids(4, 10)
    env = SupportDeskEnv()

    async def resets() -> list[str]:
        out = []
        for i, task_id in enumerate(ids):
            obs = await env.reset(task_id, i)
            out.append(obs.model_dump_json() + env.task.model_dump_json())  # type: ignore[union-attr]
        return out

    first = asyncio.run(resets())
    later = asyncio.run(resets())  # each task dropped by the episode before: kept copies
    assert later == first
    fresh = SupportDeskEnv()
    fresh.tasks = desk_source()  # type: ignore[misc]  # stamps each task anew

    async def fresh_resets() -> list[str]:
        out = []
        for i, task_id in enumerate(ids):
            obs = await fresh.reset(task_id, i)
            out.append(obs.model_dump_json() + fresh.task.model_dump_json())  # type: ignore[union-attr]
        return out

    assert asyncio.run(fresh_resets()) == first
    asyncio.run(env.close())
    asyncio.run(fresh.close())


@pytest.mark.usefixtures("young_heap")
def test_the_copy_goes_with_the_family_task() -> None:
    source = desk_source()
    task_id = multi_ids(1, 20)[0]
    task = source.resolve(task_id)
    gone = weakref.ref(task)
    del task
    world_tasks._CACHE.pop((MULTI, 1, task_id))  # the LRU lets go of the family's task
    gc.collect()
    assert gone() is None
    assert not source._stamped
    assert source.resolve(task_id).model_dump_json() == reference(task_id)


@pytest.mark.usefixtures("young_heap")
def test_a_family_that_keeps_nothing_keeps_no_copy() -> None:
    source = TaskSource(SqlEnv.tasks.families, SqlEnv.tasks.split)
    family = source.families["sql.flights"]  # held out whole; not a world family
    task_id = family.task_id(min(family.levels), 31)
    task = source.resolve(task_id)
    assert task.split == "heldout"
    gone = weakref.ref(task)
    assert not source._stamped  # the family's task was freed as resolve returned
    del task
    gc.collect()
    assert gone() is None
