"""A multi-turn Verifiers environment: Verifiers' own ``GymEnv`` over gymnasium's
``FrozenLake-v1`` (4x4, slippery: the reset seed drives the ice). Each reply is one action."""

from __future__ import annotations

from typing import Any

SYSTEM = (
    "You walk on a frozen lake, a 4x4 grid numbered 0-15 row by row, from 0 to the goal 15. "
    "Each turn, reply with one action: 0 left, 1 down, 2 right, 3 up. The ice is slippery."
)


def load_environment(**kwargs: Any) -> Any:
    import functools

    import gymnasium
    from verifiers.legacy.envs.experimental.gym_env import GymEnv

    return GymEnv(
        env_cls=functools.partial(gymnasium.make, "FrozenLake-v1", map_name="4x4"),
        action_parser=lambda text: int(text.strip()),
        obs_to_text=lambda obs: f"You are on square {int(obs)}.",
        num_train_episodes=300,
        num_eval_episodes=50,
        max_episode_steps=12,
        system_prompt=SYSTEM,
        **kwargs,
    )
