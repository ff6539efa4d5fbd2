"""Curricula: move each family's difficulty level from measured pass rates.

Feed outcomes with ``record(task_id, success)``; ``update()`` moves a family up one level
when its pass rate at the current level is above the band, down one when below, once at
least ``min_samples`` outcomes have been seen there. ``sample`` draws training tasks at the
current levels only (held-out regions are refused by ``TaskSource.sample``); a level with
no trainable task is skipped downwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymforge.core.errors import ConfigError, UnknownTaskError
from gymforge.core.seeding import derive_seed
from gymforge.tasks.source import TRAINING_PATHS, TaskSource


@dataclass
class Curriculum:
    source: TaskSource
    band: tuple[float, float] = (0.3, 0.7)
    min_samples: int = 16
    levels: dict[str, int] = field(default_factory=dict)
    _stats: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        lo, hi = self.band
        if not 0 <= lo < hi <= 1:
            raise ConfigError(f"curriculum band must satisfy 0 <= lo < hi <= 1, got {self.band}")
        for name, fam in self.source.families.items():
            if name not in self.source.split.families:
                self.levels.setdefault(name, min(fam.levels))

    def record(self, task_id: str, success: bool) -> None:
        """Count one outcome, if it was drawn at its family's current level."""
        task = self.source.resolve(task_id)
        if self.levels.get(task.family) != task.difficulty:
            return
        stats = self._stats.setdefault(task.family, [0, 0])
        stats[0] += bool(success)
        stats[1] += 1

    def update(self) -> dict[str, tuple[int, int]]:
        """Apply the band rule; returns ``{family: (old_level, new_level)}`` for moves."""
        moves: dict[str, tuple[int, int]] = {}
        lo, hi = self.band
        for family, (wins, n) in sorted(self._stats.items()):
            if n < self.min_samples:
                continue
            old = self.levels[family]
            ladder = sorted(self.source.families[family].levels)
            i = ladder.index(old)
            rate = wins / n
            new = (
                ladder[min(i + 1, len(ladder) - 1)]
                if rate > hi
                else (ladder[max(i - 1, 0)] if rate < lo else old)
            )
            self._stats[family] = [0, 0]
            if new != old:
                self.levels[family] = new
                moves[family] = (old, new)
        return moves

    def sample(self, n: int, seed: int) -> list[str]:
        """``n`` training task ids at the current levels, families in turn."""
        families = sorted(self.levels)
        if not families and n:
            raise UnknownTaskError("a curriculum needs at least one trainable task family")
        out: list[str] = []
        for i in range(n):
            family = families[i % len(families)]
            out.append(self._draw(family, derive_seed("curriculum", seed, i)))
        return out

    def _draw(self, family: str, seed: int) -> str:
        ladder = sorted(self.source.families[family].levels)
        for level in reversed(ladder[: ladder.index(self.levels[family]) + 1]):
            try:
                return self.source.sample(1, seed, "train", [level], [family])[0]
            except UnknownTaskError:
                continue  # this level is entirely held out
        raise UnknownTaskError(f"{family} has no trainable level at or below {self.levels[family]}")

    def state(self) -> dict[str, Any]:
        return {"levels": dict(self.levels), "stats": {k: list(v) for k, v in self._stats.items()}}


def _curriculum_path(source: TaskSource, n: int, seed: int) -> list[str]:
    """Push every family to its top level (all successes), then sample there."""
    cur = Curriculum(source, min_samples=1)
    if not cur.levels:
        return []
    for _ in range(max(len(f.levels) for f in source.families.values())):
        for family in cur.levels:
            cur.record(cur._draw(family, seed), True)
        cur.update()
    return cur.sample(n, seed)


TRAINING_PATHS["Curriculum"] = _curriculum_path
