"""The estimators behind calibration and evaluation, in one place.

Notation: a task was attempted ``n`` times and solved ``c`` times; ``k <= n``.

**pass@k** (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): the chance
that at least one of ``k`` attempts succeeds. The unbiased estimator from ``n`` samples is

    pass@k = 1 - C(n - c, k) / C(n, k)

computed as ``1 - prod_{i = n-c+1}^{n} (1 - k / i)``, which never forms the huge binomials
(and is exactly 1 when ``n - c < k``).

**pass^k** (Yao et al. 2024, tau-bench): the chance that *all* ``k`` attempts succeed, a
reliability measure. Its unbiased estimator is

    pass^k = C(c, k) / C(n, k) = prod_{i=0}^{k-1} (c - i) / (n - i)

Both are per-task quantities; a benchmark's figure is their mean over tasks
(:func:`mean_pass_at_k`, :func:`mean_pass_hat_k`).

**Wilson score interval** for a binomial proportion ``p_hat = c / n`` at normal quantile
``z``:

    centre    = (p_hat + z^2 / (2n)) / (1 + z^2 / n)
    halfwidth = z / (1 + z^2 / n) * sqrt(p_hat (1 - p_hat) / n + z^2 / (4 n^2))

It is the set of ``p`` with ``|p_hat - p| <= z sqrt(p (1 - p) / n)``: unlike the Wald
interval it stays inside [0, 1] and does not collapse to a point at 0/n or n/n.

**Difference of two proportions** (the held-out generalisation gap, train minus held-out):
Newcombe's hybrid score interval (Newcombe 1998, method 10), built from the two Wilson
intervals ``(l1, u1)`` and ``(l2, u2)``:

    d     = p1 - p2
    lower = d - sqrt((p1 - l1)^2 + (u2 - p2)^2)
    upper = d + sqrt((u1 - p1)^2 + (p2 - l2)^2)

All intervals treat attempts as independent draws. When several rollouts of one task are
pooled, outcomes cluster by task and the intervals are optimistic (too narrow).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

DEFAULT_CONFIDENCE = 0.95


def _check(n: int, c: int, k: int | None = None) -> None:
    if n < 0 or c < 0 or c > n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if k is not None and not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: ``1 - C(n-c, k) / C(n, k)``; needs ``1 <= k <= n``."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k of one task (all ``k`` succeed): ``C(c, k) / C(n, k)``."""
    _check(n, c, k)
    if c < k:
        return 0.0
    return math.prod((c - i) / (n - i) for i in range(k))


def mean_pass_at_k(groups: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean pass@k over tasks given as ``(n, c)``; tasks with ``n < k`` are left out.
    None when no task has ``k`` samples."""
    values = [pass_at_k(n, c, k) for n, c in groups if n >= k]
    return math.fsum(values) / len(values) if values else None


def mean_pass_hat_k(groups: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean pass^k over tasks given as ``(n, c)``; tasks with ``n < k`` are left out."""
    values = [pass_hat_k(n, c, k) for n, c in groups if n >= k]
    return math.fsum(values) / len(values) if values else None


def z_value(confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided normal quantile: 1.959964... for 0.95."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(c: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of ``c`` successes in ``n`` trials; ``(0, 1)`` when ``n == 0``."""
    _check(n, c)
    if n == 0:
        return (0.0, 1.0)
    z = z_value(confidence)
    p = c / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # exact at the edges (rounding would otherwise leave 1e-17 above 0 or below 1)
    lo = 0.0 if c == 0 else max(0.0, centre - half)
    hi = 1.0 if c == n else min(1.0, centre + half)
    return (lo, hi)


def newcombe_interval(
    c1: int, n1: int, c2: int, n2: int, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) for ``c1/n1 - c2/n2``."""
    if n1 == 0 or n2 == 0:
        return (-1.0, 1.0)
    p1, p2 = c1 / n1, c2 / n2
    l1, u1 = wilson_interval(c1, n1, confidence)
    l2, u2 = wilson_interval(c2, n2, confidence)
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


@dataclass(frozen=True)
class Proportion:
    """``successes`` of ``n`` with its rate and Wilson interval, ready for JSON."""

    successes: int
    n: int
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def rate(self) -> float | None:
        return self.successes / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.n, self.confidence)

    def as_dict(self) -> dict[str, float | int | None]:
        lo, hi = self.interval
        return {"rate": self.rate, "lo": lo, "hi": hi, "successes": self.successes, "n": self.n}


def gap(
    train: Proportion, heldout: Proportion, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, object]:
    """The held-out generalisation gap, train minus held-out success, with Newcombe's
    interval. ``significant`` is True when the interval excludes 0."""
    if not train.n or not heldout.n:
        return {
            "gap": None,
            "lo": None,
            "hi": None,
            "train": train.as_dict(),
            "heldout": heldout.as_dict(),
            "method": "newcombe-hybrid-score",
            "significant": False,
        }
    lo, hi = newcombe_interval(train.successes, train.n, heldout.successes, heldout.n, confidence)
    d = train.successes / train.n - heldout.successes / heldout.n
    return {
        "gap": d,
        "lo": lo,
        "hi": hi,
        "train": train.as_dict(),
        "heldout": heldout.as_dict(),
        "method": "newcombe-hybrid-score",
        "confidence": confidence,
        "significant": lo > 0 or hi < 0,
    }


def k_ladder(n: int, k: int) -> list[int]:
    """The ``k`` values to report for ``n`` samples: 1, 2, 4, ... up to ``n``, plus ``k``."""
    ks = {1, min(k, n), n} if n else set()
    j = 2
    while j < n:
        ks.add(j)
        j *= 2
    return sorted(x for x in ks if x >= 1)
