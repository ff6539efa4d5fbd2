"""Reliability metrics for repeated attempts: pass^k next to pass@k.

pass^k (tau-bench) is the chance that *all* of k independent attempts at a task succeed;
pass@k the chance that at least one does. Both use the unbiased estimators over n >= k
recorded attempts with c successes: pass^k = C(c, k) / C(n, k) and
pass@k = 1 - C(n - c, k) / C(n, k), averaged over tasks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from math import comb
from typing import Any

Successes = Mapping[str, Sequence[bool]] | Sequence[Sequence[bool]]


def _groups(successes: Successes) -> list[Sequence[bool]]:
    groups = list(successes.values()) if isinstance(successes, Mapping) else list(successes)
    if not groups:
        raise ValueError("no tasks")
    return groups


def pass_hat_k(successes_per_task: Successes, k: int) -> float:
    """Mean over tasks of C(c, k) / C(n, k); every task needs at least ``k`` attempts."""
    groups = _groups(successes_per_task)
    if k < 1:
        raise ValueError("k must be >= 1")
    total = 0.0
    for g in groups:
        n, c = len(g), sum(bool(x) for x in g)
        if n < k:
            raise ValueError(f"a task has {n} attempts, fewer than k={k}")
        total += comb(c, k) / comb(n, k)
    return total / len(groups)


def pass_at_k(successes_per_task: Successes, k: int) -> float:
    """Mean over tasks of 1 - C(n - c, k) / C(n, k)."""
    groups = _groups(successes_per_task)
    total = 0.0
    for g in groups:
        n, c = len(g), sum(bool(x) for x in g)
        if n < k:
            raise ValueError(f"a task has {n} attempts, fewer than k={k}")
        total += 1.0 - comb(n - c, k) / comb(n, k)
    return total / len(groups)


def successes_by_task(episodes: Iterable[Mapping[str, Any]]) -> dict[str, list[bool]]:
    """Group trajectory episode records (``record == "episode"``) by task id."""
    out: dict[str, list[bool]] = defaultdict(list)
    for e in episodes:
        if e.get("record", "episode") == "episode":
            out[str(e["task_id"])].append(bool(e["success"]))
    return dict(out)


def reliability(
    successes_per_task: Successes, ks: Sequence[int] = (1, 2, 4, 8)
) -> dict[str, float]:
    """``{"pass^1": ..., "pass@1": ..., ...}`` for every k the data allows."""
    groups = _groups(successes_per_task)
    n = min(len(g) for g in groups)
    out: dict[str, float] = {}
    for k in ks:
        if k <= n:
            out[f"pass^{k}"] = pass_hat_k(groups, k)
            out[f"pass@{k}"] = pass_at_k(groups, k)
    return out
