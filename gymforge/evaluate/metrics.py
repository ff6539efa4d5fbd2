"""Evaluation metrics over :class:`EpisodeStats`: the numbers in ``eval.json``.

Episodes count as ``trajectory.outcome.classify_outcome`` says, as in
``gymforge.rollout.summary``: a verifier error after the agent acted is a failed episode in
every rate (success, pass@k, pass^k, breakdowns, pass rates), and its rate is reported beside
success (``verifier_error``, per breakdown row ``verifier_error_rate``); only a verifier
error before any action is left out (``unscored``). Every success rate carries a Wilson
interval; pass@k and pass^k are the unbiased per-task estimators averaged over tasks (see
``estimators``).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from gymforge.evaluate.episodes import EpisodeStats
from gymforge.evaluate.estimators import (
    DEFAULT_CONFIDENCE,
    Proportion,
    gap,
    k_ladder,
    mean_pass_at_k,
    mean_pass_hat_k,
)


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def group_outcomes(stats: Sequence[EpisodeStats]) -> dict[tuple[str, int], list[EpisodeStats]]:
    """Episodes by GRPO group ``(task_id, seed)``, groups in first-seen order."""
    groups: dict[tuple[str, int], list[EpisodeStats]] = {}
    for s in stats:
        groups.setdefault(s.group, []).append(s)
    return groups


def task_pass_rates(
    stats: Sequence[EpisodeStats], confidence: float = DEFAULT_CONFIDENCE
) -> list[dict[str, Any]]:
    """One row per group: ``n`` rollouts, ``successes``, the rate and its Wilson interval,
    its ``verifier_errors``, and whether the group's rewards all tie (zero variance: no GRPO
    signal)."""
    rows = []
    for (task_id, seed), eps in group_outcomes(stats).items():
        prop = Proportion(sum(e.success for e in eps), len(eps), confidence)
        lo, hi = prop.interval
        rewards = [e.reward for e in eps]
        rows.append(
            {
                "task_id": task_id,
                "seed": seed,
                "family": eps[0].family,
                "difficulty": eps[0].difficulty,
                "split": eps[0].split,
                "n": prop.n,
                "successes": prop.successes,
                "pass_rate": prop.rate,
                "lo": lo,
                "hi": hi,
                "verifier_errors": sum(e.verifier_error for e in eps),
                "reward_std": statistics.pstdev(rewards) if len(rewards) > 1 else None,
                "zero_variance": len(eps) > 1 and max(rewards) == min(rewards),
            }
        )
    return rows


def pass_k_table(stats: Sequence[EpisodeStats], k: int) -> dict[str, dict[str, float | None]]:
    """``{"pass@k": {"1": .., "k": ..}, "pass^k": {...}}`` over the ``k`` ladder."""
    groups = [(len(eps), sum(e.success for e in eps)) for eps in group_outcomes(stats).values()]
    n = max((g[0] for g in groups), default=0)
    ladder = k_ladder(n, k)
    return {
        "pass@k": {str(j): mean_pass_at_k(groups, j) for j in ladder},
        "pass^k": {str(j): mean_pass_hat_k(groups, j) for j in ladder},
    }


def breakdown(
    stats: Sequence[EpisodeStats],
    key: Callable[[EpisodeStats], Hashable],
    k: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[dict[str, Any]]:
    """Success (with interval), pass@k, pass^k, verifier-error rate, mean reward and steps
    per value of ``key``."""
    buckets: dict[Any, list[EpisodeStats]] = defaultdict(list)
    for s in stats:
        buckets[key(s)].append(s)
    rows = []
    for value in sorted(buckets, key=lambda v: (str(type(v)), v)):
        eps = buckets[value]
        prop = Proportion(sum(e.success for e in eps), len(eps), confidence)
        table = pass_k_table(eps, k)
        kk = str(min(k, max(len(g) for g in group_outcomes(eps).values())))
        rows.append(
            {
                "key": list(value) if isinstance(value, tuple) else value,
                "episodes": len(eps),
                "tasks": len({e.group for e in eps}),
                "success": prop.as_dict(),
                "k": int(kk),
                "pass@k": table["pass@k"].get(kk),
                "pass^k": table["pass^k"].get(kk),
                "verifier_error_rate": _mean([float(e.verifier_error) for e in eps]),
                "mean_reward": _mean([e.reward for e in eps]),
                "mean_steps": _mean([float(e.steps) for e in eps]),
                "truncation_rate": _mean([float(e.truncated) for e in eps]),
            }
        )
    return rows


def tool_metrics(stats: Sequence[EpisodeStats]) -> dict[str, Any]:
    """Tool-call and error rates, overall, per tool and per error kind."""
    calls = sum(s.tool_calls for s in stats)
    errors = sum(s.tool_errors for s in stats)
    steps = sum(s.steps for s in stats)
    per_tool: dict[str, list[int]] = {}
    for s in stats:
        for name, (c, e) in s.per_tool.items():
            acc = per_tool.setdefault(name, [0, 0])
            acc[0] += c
            acc[1] += e
    kinds: Counter[str] = Counter()
    for s in stats:
        kinds.update(s.error_kinds)
    return {
        "tool_calls": calls,
        "tool_calls_per_episode": calls / len(stats) if stats else None,
        "tool_call_rate": calls / steps if steps else None,
        "tool_error_rate": errors / calls if calls else None,
        "invalid_call_rate": sum(s.invalid_calls for s in stats) / calls if calls else None,
        "fault_rate": sum(s.faults for s in stats) / calls if calls else None,
        "malformed_rate": sum(s.malformed for s in stats) / steps if steps else None,
        "per_tool": {
            name: {"calls": c, "errors": e, "error_rate": e / c if c else None}
            for name, (c, e) in sorted(per_tool.items())
        },
        "error_kinds": dict(kinds.most_common()),
    }


def step_metrics(stats: Sequence[EpisodeStats]) -> dict[str, Any]:
    """Step counts (all, successful, failed) and step efficiency against the oracle path."""
    steps = [float(s.steps) for s in stats]
    wins = [s for s in stats if s.success]
    eff = [e for e in (s.step_efficiency for s in wins) if e is not None]
    return {
        "mean": _mean(steps),
        "median": statistics.median(steps) if steps else None,
        "p90": _quantile(steps, 0.9),
        "max": max(steps, default=None),
        "histogram": {
            "all": _counts(s.steps for s in stats),
            "success": _counts(s.steps for s in wins),
            "failure": _counts(s.steps for s in stats if not s.success),
        },
        "efficiency": {
            "definition": "oracle path length / steps taken, over successful episodes",
            "n": len(eff),
            "mean": _mean(eff),
            "median": statistics.median(eff) if eff else None,
            "min": min(eff, default=None),
            "shorter_than_oracle": sum(e > 1.0 for e in eff),
        },
    }


def _counts(values: Any) -> dict[str, int]:
    c = Counter(int(v) for v in values)
    return {str(k): c[k] for k in sorted(c)}


def reward_metrics(stats: Sequence[EpisodeStats]) -> dict[str, Any]:
    names = sorted({name for s in stats for name in s.components})
    n = len(stats)
    return {
        "mean": _mean([s.reward for s in stats]),
        "components": {
            name: math.fsum(s.components.get(name, 0.0) for s in stats) / n if n else None
            for name in names
        },
    }


def heldout_gap(
    stats: Sequence[EpisodeStats], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """Train minus held-out success with Newcombe's interval; ``reason`` says why not."""
    train = [s for s in stats if s.split == "train"]
    held = [s for s in stats if s.split == "heldout"]
    out = gap(
        Proportion(sum(s.success for s in train), len(train), confidence),
        Proportion(sum(s.success for s in held), len(held), confidence),
        confidence,
    )
    if not train or not held:
        missing = "held-out" if not held else "train"
        out["reason"] = f"no {missing} episodes in this run"
    return out


def compute_metrics(
    stats: Sequence[EpisodeStats], k: int = 1, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """Every metric of ``eval.json`` except the behavioural analysis."""
    scored = [s for s in stats if s.counted]
    successes = sum(s.success for s in scored)
    errors = sum(s.verifier_error for s in scored)
    truncated = sum(s.truncated for s in scored)
    return {
        "episodes": len(scored),
        "verifier_errors": errors,
        "unscored": len(stats) - len(scored),
        "tasks": len(group_outcomes(scored)),
        "confidence": confidence,
        "success": Proportion(successes, len(scored), confidence).as_dict(),
        "verifier_error": Proportion(errors, len(scored), confidence).as_dict(),
        **pass_k_table(scored, k),
        "k": k,
        "reward": reward_metrics(scored),
        "steps": step_metrics(scored),
        "tools": tool_metrics(scored),
        "truncation": Proportion(truncated, len(scored), confidence).as_dict(),
        "mean_tokens": _mean([float(s.tokens) for s in scored]),
        "by_family": breakdown(scored, lambda s: s.family, k, confidence),
        "by_difficulty": breakdown(scored, lambda s: s.difficulty, k, confidence),
        "by_split": breakdown(scored, lambda s: s.split, k, confidence),
        "by_family_difficulty": breakdown(
            scored, lambda s: (s.family, s.difficulty), k, confidence
        ),
        "heldout_gap": heldout_gap(scored, confidence),
        "pass_rates": task_pass_rates(scored, confidence),
    }
