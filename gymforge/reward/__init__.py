"""Reward functions: verdict + costs -> named components; the scalar is their sum."""

from gymforge.reward.compose import ComposedReward, FormReward
from gymforge.reward.process import RuleCredit
from gymforge.reward.standard import RewardFn, StandardReward, StepCosts

__all__ = [
    "ComposedReward",
    "FormReward",
    "RewardFn",
    "RuleCredit",
    "StandardReward",
    "StepCosts",
]
