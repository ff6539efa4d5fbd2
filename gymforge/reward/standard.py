"""Reward functions: a verdict plus the step's costs become named components.

The scalar reward of a step is always the sum of its components (``StepResult.make``), so a
trainer can log and reweight each part. ``StandardReward`` is the default of every built-in
environment:

- ``step_cost`` on every step (a small price on length);
- ``invalid_call`` when a tool call named an unknown tool or had invalid arguments;
- ``malformed`` when the output could not be parsed and the ``MalformedPolicy`` penalises it;
- ``task`` on the final step: ``task_weight`` times the verdict's pass (or its partial
  ``score`` when ``partial_credit`` is on).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from gymforge.core.verdict import Verdict


@dataclass(frozen=True)
class StepCosts:
    """What the step cost, as counted by the environment."""

    invalid_call: bool = False
    malformed_penalty: float = 0.0
    action_tokens: int = 0


def with_tokens(costs: StepCosts, action_tokens: int) -> StepCosts:
    """``dataclasses.replace(costs, action_tokens=action_tokens)``, built directly for a
    ``StepCosts`` itself (``replace`` walks the fields on every step;
    ``tests/kit/test_step_fast_paths.py`` holds the two equal for every field)."""
    if type(costs) is StepCosts:
        return StepCosts(costs.invalid_call, costs.malformed_penalty, action_tokens)
    return replace(costs, action_tokens=action_tokens)


class RewardFn(Protocol):
    """Maps (final verdict or None, this step's costs) to named components."""

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]: ...


@dataclass(frozen=True)
class StandardReward:
    task_weight: float = 1.0
    step_cost: float = -0.01
    invalid_call: float = -0.1
    partial_credit: bool = False

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.step_cost:
            out["step_cost"] = self.step_cost
        if costs.invalid_call and self.invalid_call:
            out["invalid_call"] = self.invalid_call
        if costs.malformed_penalty:
            out["malformed"] = costs.malformed_penalty
        if verdict is not None:
            credit = (
                verdict.score
                if self.partial_credit and verdict.score is not None
                else (1.0 if verdict.passed else 0.0)
            )
            out["task"] = self.task_weight * credit
        return out
