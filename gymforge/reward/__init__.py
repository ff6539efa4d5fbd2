"""Reward functions: verdict + costs -> named components; the scalar is their sum."""

from gymforge.reward.standard import RewardFn, StandardReward, StepCosts

__all__ = ["RewardFn", "StandardReward", "StepCosts"]
