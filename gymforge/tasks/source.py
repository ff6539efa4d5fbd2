"""An environment's tasks: families and datasets, the held-out split, resolution, sampling."""

from __future__ import annotations

import random
import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Task
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.family import TaskFamily
from gymforge.tasks.split import Split
from gymforge.tasks.task_id import parse_task_id
from gymforge.tasks.truth import carry_vouch

DATASET_ROW_ID = re.compile(r"@[0-9a-f]{12}/[0-9]+$")
"""The default id of a dataset row, ``name@hash12/row``."""

SplitName = Literal["train", "heldout", "all"]


class _Original(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a family's task that a source stamped ``heldout``: while the task
    is alive, ``owner`` (the source's ``_stamped``) keeps its stamped copy under ``key``."""

    __slots__ = ("key", "owner")
    key: int
    owner: dict[int, tuple[_Original, Task]]


def _forget_stamped(ref: _Original) -> None:
    found = ref.owner.get(ref.key)
    if found is not None and found[0] is ref:
        del ref.owner[ref.key]


@dataclass(frozen=True)
class TaskSource:
    """Procedural families and loaded datasets, plus the held-out split over both.

    A dataset is held out as a whole by naming it in ``Split.families``.

    ``resolve`` hands back the task it built for an id for as long as anything holds that
    task (an environment mid-episode or idle in a pool, a session, a caller): resetting a
    task again while it is in use (a group of rollouts, a served session, a replay) neither
    regenerates it nor re-parses its truth (``TruthCodec`` memoises on the task object).
    It keeps no task alive itself: a task nobody holds is freed when it is dropped, while
    its memory is still in the CPU's caches. Keeping the last 128 tasks cost every new
    task's reset 5-10% (the oldest task, evicted, was freed cold: about 86 more last-level
    cache misses per reset of a colouring task) to spare a regeneration only to a task
    reset again after it was dropped. Generation is deterministic in the id, so a task
    handed back is the one a fresh build would give; tasks are frozen models, and an
    environment must not mutate ``Task.truth`` or ``Task.params``.

    A family task the split holds out is a copy of the family's own, stamped ``heldout``. The
    copy is kept for as long as the family's task is alive (a world family's LRU keeps its
    tasks), and no longer: otherwise nothing held the copy but its episode, and every reset
    of a held-out task after its episode let go of it parsed its id, looked it up in the
    family and copied it again, which a task not held out was spared (the family's own task
    is the one ``resolve`` hands back, alive in that LRU). The copy shares every value with
    the family's task (a few hundred bytes of its own).
    """

    BUILT = 512
    """Ids whose tasks ``resolve`` refers to (weakly) before it forgets them all and starts
    again."""

    families: Mapping[str, TaskFamily[Any]]
    split: Split = field(default_factory=Split)
    datasets: tuple[Dataset, ...] = ()
    _built: dict[str, weakref.ref[Task]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _stamped: dict[int, tuple[_Original, Task]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def of(cls, families: Iterable[TaskFamily[Any]], split: Split | None = None) -> TaskSource:
        """The source of ``families``; two of one name are refused (one would be dropped,
        and its task ids would name the other's tasks)."""
        by_name: dict[str, TaskFamily[Any]] = {}
        for family in families:
            if family.name in by_name:
                raise ValueError(
                    f"two task families are named {family.name!r}: give each its own name"
                )
            by_name[family.name] = family
        return cls(by_name, split or Split())

    def with_dataset(self, dataset: Dataset) -> TaskSource:
        """A copy that also serves ``dataset``: ids are each row's ``task_id`` or
        ``name@hash/row``."""
        return replace(self, datasets=(*self.datasets, dataset))

    def resolve(self, task_id: str) -> Task:
        """Rebuild the task from its id alone, stamped with its split."""
        built = self._built
        ref = built.get(task_id)
        if ref is not None:
            task = ref()
            if task is not None:
                return task
        task = self._resolve(task_id)
        if len(built) >= self.BUILT:  # most are dead by then; a live one is rebuilt once
            built.clear()
        built[task_id] = weakref.ref(task)
        return task

    def _resolve(self, task_id: str) -> Task:
        for ds in self.datasets:
            found = ds.resolve(task_id)
            if found is not None:
                return self._stamp(found)
        try:
            family_name = parse_task_id(task_id).family
        except UnknownTaskError as err:
            if not self.datasets:
                if DATASET_ROW_ID.search(task_id):  # name@hash12/row: a dataset's row
                    raise UnknownTaskError(
                        f"{err}; it names a row of the dataset {task_id.split('/')[0]!r}: "
                        "load that dataset (--dataset FILE)"
                    ) from None
                raise
            pins = ", ".join(d.pin for d in self.datasets)
            raise UnknownTaskError(
                f"task id {task_id[:200]!r} is in no loaded dataset ({pins}) "
                "and is not a family task id"
            ) from None
        family = self.families.get(family_name)
        if family is None:
            raise UnknownTaskError(
                f"unknown task family {family_name!r}; known: {', '.join(sorted(self.families))}"
            )
        task = family.resolve(task_id)
        kept = self._stamped.get(id(task))
        if kept is not None and kept[0]() is task:  # held out, and stamped while alive
            return kept[1]
        stamped = self._stamp(task)
        if stamped is not task:
            ref = _Original(task, _forget_stamped)
            ref.key, ref.owner = id(task), self._stamped
            self._stamped[ref.key] = (ref, stamped)
        return stamped

    def _stamp(self, task: Task) -> Task:
        if task.split != "heldout" and self.split.is_heldout(task.family, task.params):
            stamped = task.model_copy(update={"split": "heldout"})
            carry_vouch(task, stamped)
            return stamped
        return task

    def _held(self, task: Task) -> bool:
        """Held out by the split, or by its dataset row's own ``split`` column."""
        return task.split == "heldout" or self.split.is_heldout(task.family, task.params)

    def dataset_rows(
        self,
        split: SplitName = "train",
        families: Iterable[str] | None = None,
        n: int | None = None,
        seed: int = 0,
    ) -> list[str]:
        """The loaded datasets' task ids of ``split``: every row once, in file order (datasets
        in load order), or with ``n`` a sample of ``n`` distinct rows drawn without
        replacement. The sample is the first ``n`` of one seeded permutation, so a larger
        ``n`` extends a smaller one (a resumed run grows). ``n`` above the row count is an
        error naming the count."""
        only = None if families is None else set(families)
        sets = [d for d in self.datasets if only is None or d.name in only]
        if not sets:
            raise UnknownTaskError("no dataset loaded to run")
        rows = [
            t.task_id
            for d in sets
            for t in d.tasks
            if split == "all" or self._held(t) == (split == "heldout")
        ]
        pins = ", ".join(d.pin for d in sets)
        if not rows:
            raise UnknownTaskError(f"{pins} has no {split} rows")
        if n is None:
            return rows
        if n > len(rows):
            raise UnknownTaskError(
                f"-n {n} is more than the {len(rows)} {split} rows of {pins} "
                "(rows are drawn without replacement; omit -n to run every row)"
            )
        r = random.Random(derive_seed("dataset-rows", seed, split))
        return [rows[i] for i in r.sample(range(len(rows)), len(rows))[:n]]

    def sample(
        self,
        n: int,
        seed: int,
        split: SplitName = "train",
        difficulties: Iterable[int] | None = None,
        families: Iterable[str] | None = None,
    ) -> list[str]:
        """``n`` task ids from ``split``, deterministic in ``seed``; never a held-out id for
        ``train``. Sources (families, then datasets) are visited in turn so that none
        dominates; datasets take part only when no difficulty filter is given. Every draw
        comes from one RNG stream keyed on ``(seed, split)``, so nearby seeds share nothing."""
        wanted = None if difficulties is None else set(difficulties)
        only = None if families is None else set(families)
        names = [f for f in sorted(self.families) if only is None or f in only]
        sets = [d for d in self.datasets if wanted is None and (only is None or d.name in only)]
        pools: list[TaskFamily[Any] | Dataset] = [self.families[f] for f in names] + sets
        if not pools:
            raise UnknownTaskError("no task family or dataset to sample from")
        r = random.Random(derive_seed("task-sample", seed, split))
        out: list[str] = []
        tries = 0
        while len(out) < n:
            tries += 1
            if tries > 1000 * max(n, 1):
                raise UnknownTaskError(f"could not draw {n} {split} tasks; is the split empty?")
            pool = pools[tries % len(pools)]  # in turn; a rejection moves on to the next
            if isinstance(pool, Dataset):
                task = pool.tasks[r.randrange(len(pool))]
                held = self._held(task)
                task_id = task.task_id
            else:
                levels = [d for d in sorted(pool.levels) if wanted is None or d in wanted]
                if not levels:
                    continue
                level = r.choice(levels)
                task_seed = r.randrange(10**9)
                held = self.split.is_heldout(pool.name, pool.params_for(level, task_seed))
                task_id = pool.task_id(level, task_seed)
            if (split == "train" and held) or (split == "heldout" and not held):
                continue
            out.append(task_id)
        return out


TrainingPath = Callable[[TaskSource, int, int], list[str]]
TRAINING_PATHS: dict[str, TrainingPath] = {
    "TaskSource.sample(train)": lambda source, n, seed: source.sample(n, seed, "train"),
}
"""Every code path that hands tasks to training: ``(source, n, seed) -> task ids``. The QA
check ``heldout_exclusion`` drives each one; curricula, mixtures and pools register here."""
