"""Held-out splits: whole families and parameter regions reserved for evaluation.

Every training path (``TaskSource.train``, curricula, mixtures) asks ``Split.check_train``
and gets ``HeldOutError`` for a held-out task; evaluation asks for ``heldout`` explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.errors import UserError
from gymforge.core.types import Task

Region = Callable[[Mapping[str, Any]], bool]


class HeldOutError(UserError):
    """A training path was asked for a held-out task."""


@dataclass(frozen=True)
class Split:
    """``families``: held out whole. ``regions``: family -> named predicates over params."""

    families: frozenset[str] = frozenset()
    regions: Mapping[str, Mapping[str, Region]] = field(default_factory=dict)

    def is_heldout(self, family: str, params: Mapping[str, Any]) -> bool:
        if family in self.families:
            return True
        return any(pred(params) for pred in self.regions.get(family, {}).values())

    def check_train(self, task: Task) -> Task:
        if task.split == "heldout" or self.is_heldout(task.family, task.params):
            raise HeldOutError(f"task {task.task_id} is held out; training paths refuse it")
        return task

    @property
    def declared(self) -> bool:
        return bool(self.families) or any(self.regions.values())
