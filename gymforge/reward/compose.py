"""Reward building blocks that combine with ``StandardReward``: the answer-form component and
composition. Every part is its own named component."""

from __future__ import annotations

from dataclasses import dataclass

from gymforge.core.verdict import Verdict
from gymforge.reward.standard import RewardFn, StepCosts


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
