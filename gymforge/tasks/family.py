"""Task families: seeded, parameterised task distributions with resolvable ids.

A family's ``task_id`` is ``{family}/v{version}/d{difficulty}/s{seed}``: the difficulty level
picks a region of the ``ParamSpace``, the seed draws params inside it (through a stable-hash
RNG stream) and then generates the task. ``family.resolve(task_id)`` therefore rebuilds the
same task from the id alone, which is what makes replay work from a trajectory file.
"""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Task

TASK_ID = re.compile(
    r"^(?P<family>[\w.\-]+)/v(?P<version>\d+)/d(?P<difficulty>\d+)/s(?P<seed>\d+)$"
)


@dataclass(frozen=True)
class IntKnob:
    """An integer knob, inclusive range."""

    lo: int
    hi: int

    def sample(self, r: random.Random) -> int:
        return r.randint(self.lo, self.hi)

    def contains(self, value: Any) -> bool:
        return isinstance(value, int) and self.lo <= value <= self.hi


@dataclass(frozen=True)
class ChoiceKnob:
    """A knob over a fixed set of values."""

    values: tuple[Any, ...]

    def sample(self, r: random.Random) -> Any:
        return r.choice(self.values)

    def contains(self, value: Any) -> bool:
        return value in self.values


Knob = IntKnob | ChoiceKnob


@dataclass(frozen=True)
class ParamSpace:
    """What varies, over what ranges, under what constraint."""

    knobs: Mapping[str, Knob]
    constraint: Callable[[dict[str, Any]], bool] | None = None
    max_tries: int = 1000

    def sample(self, r: random.Random) -> dict[str, Any]:
        for _ in range(self.max_tries):
            params = {name: knob.sample(r) for name, knob in sorted(self.knobs.items())}
            if self.constraint is None or self.constraint(params):
                return params
        raise ValueError("ParamSpace constraint rejected every sample")

    def contains(self, params: Mapping[str, Any]) -> bool:
        if set(params) != set(self.knobs):
            return False
        if not all(k.contains(params[n]) for n, k in self.knobs.items()):
            return False
        return self.constraint is None or self.constraint(dict(params))


def parse_task_id(task_id: str) -> tuple[str, int, int, int]:
    """``(family, version, difficulty, seed)`` of a family task id, or UnknownTaskError."""
    m = TASK_ID.match(task_id)
    if not m:
        raise UnknownTaskError(f"not a family task id (family/vN/dN/sN): {task_id[:200]!r}")
    return m["family"], int(m["version"]), int(m["difficulty"]), int(m["seed"])


@dataclass
class TaskFamily(ABC):
    """Subclass and implement ``build``. ``levels`` maps difficulty level -> param region."""

    name: str
    version: int
    levels: Mapping[int, ParamSpace] = field(default_factory=dict)

    @abstractmethod
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, dict[str, Any]]:
        """Return ``(prompt, truth)`` for ``params``, drawing only from ``r``."""

    def difficulty(self, params: Mapping[str, Any]) -> int:
        """The lowest level whose region contains ``params``."""
        for level in sorted(self.levels):
            if self.levels[level].contains(params):
                return level
        raise ValueError(f"{self.name}: params {dict(params)} lie in no difficulty level")

    def task_id(self, difficulty: int, seed: int) -> str:
        return f"{self.name}/v{self.version}/d{difficulty}/s{seed}"

    def params_for(self, difficulty: int, seed: int) -> dict[str, Any]:
        if difficulty not in self.levels:
            raise UnknownTaskError(f"{self.name} has no difficulty level {difficulty}")
        r = random.Random(derive_seed(self.name, self.version, difficulty, seed, "params"))
        return self.levels[difficulty].sample(r)

    def generate(self, params: dict[str, Any], seed: int, task_id: str | None = None) -> Task:
        """Deterministic: the same ``(params, seed)`` always gives the same task."""
        difficulty = self.difficulty(params)
        r = random.Random(derive_seed(self.name, self.version, sorted(params.items()), seed))
        prompt, truth = self.build(dict(params), r)
        return Task(
            task_id=task_id or self.task_id(difficulty, seed),
            family=self.name,
            prompt=prompt,
            truth=truth,
            params=params,
            difficulty=difficulty,
        )

    def task(self, difficulty: int, seed: int) -> Task:
        return self.generate(
            self.params_for(difficulty, seed), seed, self.task_id(difficulty, seed)
        )

    def resolve(self, task_id: str) -> Task:
        family, version, difficulty, seed = parse_task_id(task_id)
        if family != self.name or version != self.version:
            raise UnknownTaskError(
                f"task id {task_id!r} is for {family} v{version}, not {self.name} v{self.version}"
            )
        return self.task(difficulty, seed)
