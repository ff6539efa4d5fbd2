"""Mixtures: sample training tasks across families (and datasets) by weight.

- ``weighted``: each draw picks a source with probability proportional to its weight.
- ``balanced``: a deterministic quota; after k draws each source has ``round(share * k)``
  draws give or take one, so no source can dominate by luck.

``max_share`` caps any one source's share (the excess is spread over the others). Only
training tasks come out: every draw goes through ``TaskSource.sample(..., "train")``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gymforge.core.errors import ConfigError
from gymforge.core.seeding import derive_seed
from gymforge.tasks.source import TRAINING_PATHS, TaskSource


def capped_shares(weights: Mapping[str, float], max_share: float | None) -> dict[str, float]:
    """Normalised weights with no share above ``max_share`` (water-filling)."""
    if not weights or any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ConfigError("mixture weights must be >= 0 with a positive total")
    shares = {k: w / sum(weights.values()) for k, w in weights.items() if w > 0}
    if max_share is None:
        return shares
    if max_share * len(shares) < 1:
        raise ConfigError(f"max_share {max_share} is too small for {len(shares)} sources")
    capped: dict[str, float] = {}
    while True:
        free = {k: v for k, v in shares.items() if k not in capped}
        budget = 1 - sum(capped.values())
        total = sum(free.values())
        over = {k for k, v in free.items() if v / total * budget > max_share}
        if not over:
            return {**capped, **{k: v / total * budget for k, v in free.items()}}
        capped.update({k: max_share for k in over})


@dataclass(frozen=True)
class Mixture:
    source: TaskSource
    weights: Mapping[str, float]
    mode: Literal["weighted", "balanced"] = "weighted"
    max_share: float | None = None

    def __post_init__(self) -> None:
        known = set(self.source.families) | {d.name for d in self.source.datasets}
        unknown = set(self.weights) - known
        if unknown:
            raise ConfigError(f"mixture names unknown sources {sorted(unknown)}")
        held = [name for name in self.weights if name in self.source.split.families]
        if held:
            raise ConfigError(f"mixture weights name held-out families {held}")

    @property
    def shares(self) -> dict[str, float]:
        return capped_shares(self.weights, self.max_share)

    def sample(self, n: int, seed: int) -> list[str]:
        """``n`` training task ids, deterministic in ``seed``."""
        shares = self.shares
        names = sorted(shares)
        r = random.Random(derive_seed("mixture", seed, self.mode))
        counts: Counter[str] = Counter()
        out: list[str] = []
        for i in range(n):
            if self.mode == "weighted":
                name = r.choices(names, weights=[shares[k] for k in names])[0]
            else:
                name = max(names, key=lambda k: (shares[k] * (i + 1) - counts[k], k))
            counts[name] += 1
            out += self.source.sample(
                1, derive_seed("mixture-item", seed, i), "train", families=[name]
            )
        return out


def _mixture_path(source: TaskSource, n: int, seed: int) -> list[str]:
    names = [*source.families, *(d.name for d in source.datasets)]
    trainable = [k for k in names if k not in source.split.families]
    return Mixture(source, dict.fromkeys(trainable, 1.0), "balanced").sample(n, seed)


TRAINING_PATHS["Mixture(balanced)"] = _mixture_path
