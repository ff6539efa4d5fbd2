"""Reward functions: verdict + costs -> named components; the scalar is their sum."""

from gymforge.reward.compose import (
    ComposedReward,
    FormatPenalty,
    FormReward,
    LengthPenalty,
    SparseReward,
)
from gymforge.reward.process import RuleCredit
from gymforge.reward.shaping import Potential, ShapedEnv
from gymforge.reward.standard import RewardFn, StandardReward, StepCosts

__all__ = [
    "ComposedReward",
    "FormReward",
    "FormatPenalty",
    "LengthPenalty",
    "Potential",
    "RewardFn",
    "RuleCredit",
    "ShapedEnv",
    "SparseReward",
    "StandardReward",
    "StepCosts",
]
