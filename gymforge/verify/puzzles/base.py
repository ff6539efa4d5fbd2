"""``PuzzleFamily``: a task family that also judges and solves its own puzzles.

Each family module defines one subclass holding its generator (``build``), its difficulty
levels, its held-out regions, its validity checker (``check``) and its reference solution
(``oracle_answer``). The environment only dispatches on ``task.family``.

Versions: a family that changes its generator or its checker bumps ``version`` and keeps
every older version in ``TaskFamily.older`` (the same class, told its version, so old ids
regenerate and are judged exactly as recorded). ``at_version(n)`` and ``resolve`` reach them.
``from_row`` turns a dataset row's fields into the hidden truth ``check`` reads (the
current version's rules).

Each family declares its truth model (a ``PuzzleTruth``): ``check``, ``oracle_answer`` and
``answer_form`` take it typed, and ``truth_of(task)`` parses a task's.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from gymforge.core.types import Task
from gymforge.tasks import TaskFamily
from gymforge.tasks.task_id import parse_task_id
from gymforge.verify.puzzles.answer import Outcome

Region = Callable[[Mapping[str, Any]], bool]


class PuzzleTruth(BaseModel):
    """What every puzzle's truth may carry besides its family's fields: a dataset row's
    family (``row_family``, which also marks a dataset task) and its reference answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    row_family: str | None = None
    reference: str | None = None


class RowMark(BaseModel):
    """Just enough of any puzzle truth to tell which family judges it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    row_family: str | None = None


PuzzleT = TypeVar("PuzzleT", bound=PuzzleTruth)


@dataclass
class PuzzleFamily(TaskFamily[PuzzleT], Generic[PuzzleT]):
    """A ``TaskFamily`` plus ``check`` and ``oracle_answer``; ``heldout`` names the
    parameter regions the environment's ``Split`` reserves for evaluation."""

    heldout: ClassVar[Mapping[str, Region]] = {}
    multiline_answer: ClassVar[bool] = False
    """Whether the answer may run over several lines after ``Answer:`` (from version 2)."""

    @abstractmethod
    def check(self, truth: PuzzleT, answer: str) -> Outcome:
        """Judge the *validity* of ``answer`` (the text after ``Answer:``) for the task whose
        hidden data is ``truth``. Every valid solution passes. Never evaluates model text
        as code; bounded time on any input of at most ``MAX_ANSWER_CHARS`` characters."""

    @abstractmethod
    def oracle_answer(self, truth: PuzzleT) -> str:
        """A canonical valid solution, written in the answer format the prompt asks for."""

    def from_row(self, row: Mapping[str, Any]) -> PuzzleT:
        """The hidden truth of a dataset row (its family-specific fields); ValueError saying
        what is missing or wrong."""
        raise ValueError(f"{self.name} takes no dataset rows")

    def answer_form(self, truth: PuzzleT) -> tuple[str, str]:
        """``(form, example)`` of the answer line for the task ``truth`` (dataset prompts)."""
        raise NotImplementedError

    def multiline(self) -> bool:
        return self.multiline_answer and self.version >= 2

    def at_version(self, version: int) -> PuzzleFamily[PuzzleT]:
        family = super().at_version(version)
        if not isinstance(family, PuzzleFamily):
            raise TypeError(f"{self.name} v{version} is not a PuzzleFamily: it cannot judge")
        return family

    def for_task(self, task: Task) -> PuzzleFamily[PuzzleT]:
        """The version that made ``task`` (a dataset task is judged by the current one). A
        generated task has no row mark, so its truth is not validated here (this is asked on
        every reset and verdict)."""
        truth = task.truth
        if "row_family" in truth and RowMark.model_validate(truth).row_family is not None:
            return self
        return self.at_version(parse_task_id(task.task_id).version)
