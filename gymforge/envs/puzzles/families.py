"""The puzzle families by name, and which family (and version) judges a task."""

from __future__ import annotations

from typing import Any

from gymforge.core.types import Task
from gymforge.envs.puzzles import coloring, shortest_path
from gymforge.verify.puzzles import countdown, knights_knaves, sudoku
from gymforge.verify.puzzles.base import PuzzleFamily, RowMark

FAMILIES: tuple[PuzzleFamily[Any], ...] = (
    countdown.FAMILY,
    sudoku.FAMILY,
    knights_knaves.FAMILY,
    shortest_path.FAMILY,
    coloring.FAMILY,
)
BY_NAME: dict[str, PuzzleFamily[Any]] = {f.name: f for f in FAMILIES}
SHORT: dict[str, PuzzleFamily[Any]] = {f.name.removeprefix("puzzles."): f for f in FAMILIES}


def family_named(name: str) -> PuzzleFamily[Any]:
    """``countdown`` or ``puzzles.countdown``; ValueError naming the known families."""
    found = BY_NAME.get(name) or SHORT.get(name)
    if found is None:
        raise ValueError(f"unknown puzzle family {name[:60]!r}; known: {', '.join(sorted(SHORT))}")
    return found


def family_of(task: Task) -> PuzzleFamily[Any]:
    """The family, at the version that made ``task``, whose checker judges it."""
    truth = task.truth  # a generated task has no row mark: nothing to validate
    name = RowMark.model_validate(truth).row_family if "row_family" in truth else None
    return BY_NAME[name or task.family].for_task(task)
