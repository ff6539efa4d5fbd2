"""The ``swe`` reward: named components from the verdict and the step's costs."""

from __future__ import annotations

from dataclasses import dataclass, field

from gymforge.core.verdict import Verdict
from gymforge.reward.standard import StandardReward, StepCosts


@dataclass(frozen=True)
class SweReward:
    """``StandardReward`` (``task``, ``step_cost``, ``invalid_call``) plus ``hidden_tests``
    (weight x the verdict's score: the fraction of hidden tests passed, 0 when none of the
    agent's changes reached the hidden run or a protected file changed) and ``diff_cost``
    (per line added or removed, capped). An unchanged repository earns 0 on every component
    but the costs (``step_cost``, ``invalid_call``)."""

    base: StandardReward = field(default_factory=StandardReward)
    tests_weight: float = 0.3
    per_line: float = -0.002
    max_diff_cost: float = -0.2

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out = self.base(verdict, costs)
        if verdict is not None:
            out["hidden_tests"] = self.tests_weight * (verdict.score or 0.0)
            lines = int(verdict.facts.get("diff_lines") or 0)
            out["diff_cost"] = max(self.max_diff_cost, self.per_line * lines)
        return out
