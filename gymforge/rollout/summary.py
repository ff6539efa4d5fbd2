"""Run summaries: the ``summary.json`` fields, including GRPO group statistics."""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from gymforge.trajectory.outcome import (
    EpisodeOutcome,
    OutcomeCounts,
    classify_outcome,
    count_outcomes,
)
from gymforge.trajectory.schema import component_totals

ZERO_VARIANCE_LISTED = 50
_COUNT_FIELDS = tuple(f.name for f in fields(OutcomeCounts))


def group_stats(episodes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Groups are the rollouts of one ``(task_id, seed)``. A group whose rewards are all
    equal gives GRPO no signal; those are counted and the first few listed. A group's
    deviation is ``statistics.pstdev`` (exact), nan when one of its rewards is not finite
    (so is then their mean)."""
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for e in episodes:
        groups[(e["task_id"], e["seed"])].append(e["reward"])
    sized = {k: v for k, v in groups.items() if len(v) > 1}
    zero = sorted(f"{t} seed {s}" for (t, s), v in sized.items() if max(v) == min(v))
    stds = [_deviation(v) for v in sized.values()]
    return {
        "groups": len(groups),
        "group_size_max": max((len(v) for v in groups.values()), default=0),
        "zero_variance_groups": len(zero),
        "zero_variance_examples": zero[:ZERO_VARIANCE_LISTED],
        "mean_group_reward_std": _mean(stds) if stds else None,
    }


def _deviation(rewards: list[float]) -> float:
    if all(map(math.isfinite, rewards)):
        return statistics.pstdev(rewards)
    return math.nan  # pstdev itself raises AttributeError


def _mean(values: list[float]) -> float:
    """``fsum(values) / len(values)``, with :class:`_ExactMean`'s answers where fsum raises
    (a group's deviations are >= 0 or nan: nan when one is nan, the exact mean, rounded
    once, when their sum overflows)."""
    acc = _ExactMean()
    acc.add(values)
    return acc.mean(len(values))


class _ExactMean:
    """A running sum of floats, exact, and the mean it gives: ``fsum(values) / n`` wherever
    fsum answers. Where fsum raises: finite values whose sum (or a partial sum) passes the
    largest float have their exact mean, rounded once (always finite); with values that are
    not finite the mean is what IEEE makes of those alone (inf, -inf or nan)."""

    def __init__(self) -> None:
        self._sum = 0  # of the finite values, in units of 2**-1074 (all floats' unit)
        self._special = 0.0  # the IEEE sum of the values that are not finite (0.0: none)

    def add(self, values: Iterable[float]) -> None:
        for v in values:
            if math.isfinite(v):
                num, den = v.as_integer_ratio()  # den is a power of two, at most 2**1074
                self._sum += num << (1075 - den.bit_length())
            else:  # inf, -inf and nan add up alike in any order
                self._special += v

    def mean(self, n: int) -> float:
        if self._special != 0.0:
            return self._special / n
        try:  # int / int is correctly rounded, as fsum is: the same float
            return self._sum / (1 << 1074) / n
        except OverflowError:  # where fsum raises: the exact mean, rounded once
            return self._sum / (n << 1074)


class Tally:
    """The headline figures of ``summarize`` (success rate, mean reward), kept as episodes
    arrive: the progress bar shows these, computed as the summary table's are. Each figure
    folds in only the episodes added since it was last asked for (the progress bar asks
    after every episode, so a whole-list pass there made a run quadratic in its episodes),
    and equals the whole-list computation: ``count_outcomes`` over every outcome, and
    ``math.fsum`` over every reward divided by their number, with :class:`_ExactMean`'s
    answers where fsum raises."""

    def __init__(self, episodes: Sequence[dict[str, Any]] = ()) -> None:
        self.outcomes: list[EpisodeOutcome] = []
        self.rewards: list[float] = []
        self._counts = OutcomeCounts()  # of outcomes[:_counted]
        self._counted = 0
        self._sum = _ExactMean()  # of rewards[:_summed]
        self._summed = 0
        for e in episodes:
            self.add(e)

    def add(self, episode: dict[str, Any]) -> None:
        outcome = classify_outcome(episode)
        self.outcomes.append(outcome)
        if outcome.counted:
            self.rewards.append(float(episode["reward"]))

    @property
    def counts(self) -> OutcomeCounts:
        """``count_outcomes`` of every outcome added."""
        if self._counted < len(self.outcomes):
            new = count_outcomes(self.outcomes[self._counted :])
            self._counts = OutcomeCounts(
                *(getattr(self._counts, f) + getattr(new, f) for f in _COUNT_FIELDS)
            )
            self._counted = len(self.outcomes)
        return self._counts

    @property
    def success_rate(self) -> float:
        return self.counts.success_rate or 0.0

    @property
    def mean_reward(self) -> float:
        if not self.rewards:
            return 0.0
        self._sum.add(self.rewards[self._summed :])
        self._summed = len(self.rewards)
        return self._sum.mean(self._summed)


def summarize(episodes: Sequence[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """Aggregate episode records into the ``summary.json`` fields.

    Every episode counts as ``trajectory.outcome.classify_outcome`` says: a verifier error
    after the agent acted is a failed episode in every rate and mean (its reason
    ``verifier_error: <kind>`` among ``failure_reasons``), and ``verifier_error_rate`` is
    their share of ``episodes``. Only a verifier error before any action is left out, as
    ``unscored``.
    """
    tally = Tally(episodes)
    outcomes = tally.outcomes
    counts = tally.counts
    episodes = [e for e, o in zip(episodes, outcomes, strict=True) if o.counted]
    n = len(episodes)
    comps = component_totals([e["reward_components"] for e in episodes])

    def mean(values: list[float]) -> float:
        return math.fsum(values) / n if n else 0.0

    return {
        **extra,
        "episodes": n,
        "success_rate": tally.success_rate,
        "verifier_errors": counts.verifier_errors,
        "verifier_error_rate": counts.verifier_error_rate or 0.0,
        "unscored": counts.unscored,
        "mean_reward": tally.mean_reward,
        "mean_reward_components": {k: v / n for k, v in sorted(comps.items())},
        "terminated": sum(e["terminated"] for e in episodes),
        "truncated": sum(e["truncated"] for e in episodes),
        "mean_steps": mean([float(e["steps"]) for e in episodes]),
        "tokens": sum(e.get("tokens", 0) for e in episodes),
        "failure_reasons": dict(
            Counter(e["failure_reason"] for e in episodes if e["failure_reason"]).most_common()
        ),
        **group_stats(episodes),
    }
