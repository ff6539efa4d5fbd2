"""Reward building blocks that combine with ``StandardReward``: sparse rewards, length and
format penalties, and composition. Every part is its own named component."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from gymforge.core.verdict import Verdict
from gymforge.reward.standard import RewardFn, StepCosts


@dataclass(frozen=True)
class SparseReward:
    """Only the outcome: ``task`` on the final step, nothing else."""

    task_weight: float = 1.0

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        return {} if verdict is None else {"task": self.task_weight * float(verdict.passed)}


@dataclass(frozen=True)
class LengthPenalty:
    """``length`` = ``per_token`` for every action token beyond ``free_tokens``."""

    per_token: float = -0.001
    free_tokens: int = 512

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        over = costs.action_tokens - self.free_tokens
        return {"length": self.per_token * over} if over > 0 and self.per_token else {}


@dataclass(frozen=True)
class FormatPenalty:
    """``format`` = ``penalty`` when the final verdict failed for a format reason (no answer
    found, unparseable answer) rather than a wrong one."""

    penalty: float = -0.1
    reasons: Collection[str] = ("no_answer", "parse_error")

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        hit = verdict is not None and not verdict.passed and verdict.reason in self.reasons
        return {"format": self.penalty} if hit else {}


@dataclass(frozen=True)
class FormReward:
    """``form`` = 0 when the task demanded an answer form and the answer met it, ``penalty``
    when it did not; no component when the verdict reports no form (``form_ok`` absent).
    The value itself is ``task``'s business: a wrong value in the right form gets 0 here."""

    penalty: float = -0.5

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        if verdict is None or "form_ok" not in verdict.facts:
            return {}
        return {"form": 0.0 if verdict.facts["form_ok"] else self.penalty}


class ComposedReward:
    """The union of several reward functions' components. Two parts producing the same
    component name is an authoring error and raises, rather than silently adding up."""

    def __init__(self, *parts: RewardFn) -> None:
        if not parts:
            raise ValueError("ComposedReward needs at least one part")
        self.parts = parts

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out: dict[str, float] = {}
        for part in self.parts:
            for name, value in part(verdict, costs).items():
                if name in out:
                    raise ValueError(f"two reward parts both produce the component {name!r}")
                out[name] = value
        return out
