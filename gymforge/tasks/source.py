"""An environment's tasks: its families, its held-out split, and id resolution/sampling."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Task
from gymforge.tasks.family import TaskFamily, parse_task_id
from gymforge.tasks.split import Split

SplitName = Literal["train", "heldout", "all"]


@dataclass(frozen=True)
class TaskSource:
    families: Mapping[str, TaskFamily]
    split: Split = field(default_factory=Split)

    @classmethod
    def of(cls, families: Iterable[TaskFamily], split: Split | None = None) -> TaskSource:
        return cls({f.name: f for f in families}, split or Split())

    def resolve(self, task_id: str) -> Task:
        """Rebuild the task from its id alone, stamped with its split."""
        family_name = parse_task_id(task_id)[0]
        family = self.families.get(family_name)
        if family is None:
            raise UnknownTaskError(
                f"unknown task family {family_name!r}; known: {', '.join(sorted(self.families))}"
            )
        task = family.resolve(task_id)
        if self.split.is_heldout(task.family, task.params):
            task = task.model_copy(update={"split": "heldout"})
        return task

    def sample(
        self,
        n: int,
        seed: int,
        split: SplitName = "train",
        difficulties: Iterable[int] | None = None,
    ) -> list[str]:
        """``n`` task ids from ``split``, deterministic in ``seed``; never a held-out id for
        ``train``. Families are visited in turn so that none dominates."""
        names = sorted(self.families)
        if not names:
            raise UnknownTaskError("this environment declares no task families")
        wanted = None if difficulties is None else set(difficulties)
        r = random.Random(derive_seed("task-sample", seed, split))
        out: list[str] = []
        tries = 0
        while len(out) < n:
            tries += 1
            if tries > 1000 * max(n, 1):
                raise UnknownTaskError(f"could not draw {n} {split} tasks; is the split empty?")
            family = self.families[names[(len(out) + tries) % len(names)]]
            levels = [d for d in sorted(family.levels) if wanted is None or d in wanted]
            if not levels:
                continue
            level = r.choice(levels)
            task_seed = r.randrange(10**9)
            params = family.params_for(level, task_seed)
            held = self.split.is_heldout(family.name, params)
            if (split == "train" and held) or (split == "heldout" and not held):
                continue
            out.append(family.task_id(level, task_seed))
        return out


TrainingPath = Callable[[TaskSource, int, int], list[str]]
TRAINING_PATHS: dict[str, TrainingPath] = {
    "TaskSource.sample(train)": lambda source, n, seed: source.sample(n, seed, "train"),
}
"""Every code path that hands tasks to training: ``(source, n, seed) -> task ids``. The QA
check ``heldout_exclusion`` drives each one; curricula and mixtures register here too."""
