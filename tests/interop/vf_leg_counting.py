"""A Verifiers environment package in miniature: ``load_environment()`` returns Verifiers' own
``ReasoningGymEnv`` (its reasoning-gym integration, generated offline) over ``leg_counting``."""

from __future__ import annotations

from typing import Any


def load_environment(**kwargs: Any) -> Any:
    from verifiers.legacy.envs.integrations.reasoninggym_env import ReasoningGymEnv

    return ReasoningGymEnv(
        gym="leg_counting", num_train_examples=400, num_eval_examples=100, seed=0, **kwargs
    )
