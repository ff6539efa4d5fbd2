"""reasoning-gym datasets as gymforge environments: ``reasoning-gym:NAME`` (extra ``interop``).

Importing this package imports ``reasoning_gym``; ``gymforge.registry.resolve`` imports it only
when such an id is asked for, so the core install does not need the extra.
"""

from gymforge.envs.reasoning_gym.env import ReasoningGymEnv, env_class, make

__all__ = ["ReasoningGymEnv", "env_class", "make"]
