"""``PuzzleFamily``: a task family that also judges and solves its own puzzles.

Each family module defines one subclass holding its generator (``build``), its difficulty
levels, its held-out regions, its validity checker (``check``) and its reference solution
(``oracle_answer``). The environment only dispatches on ``task.family``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from gymforge.envs.puzzles.answer import Outcome
from gymforge.tasks import TaskFamily

Region = Callable[[Mapping[str, Any]], bool]


class PuzzleFamily(TaskFamily):
    """A ``TaskFamily`` plus ``check`` and ``oracle_answer``; ``heldout`` names the
    parameter regions the environment's ``Split`` reserves for evaluation."""

    heldout: ClassVar[Mapping[str, Region]] = {}

    @abstractmethod
    def check(self, truth: Mapping[str, Any], answer: str) -> Outcome:
        """Judge the *validity* of ``answer`` (the text after ``Answer:``) for the task whose
        hidden data is ``truth``. Every valid solution passes. Never evaluates model text
        as code; bounded time on any input of at most ``MAX_ANSWER_CHARS`` characters."""

    @abstractmethod
    def oracle_answer(self, truth: Mapping[str, Any]) -> str:
        """A canonical valid solution, written in the answer format the prompt asks for."""
