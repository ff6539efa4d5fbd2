"""Harbor task directories as gymforge environments: ``harbor:PATH`` (``docs/harbor.md``).

``gymforge.registry.resolve`` imports this package only when such an id is asked for.
"""

from gymforge.envs.harbor.env import HarborEnv, env_class

__all__ = ["HarborEnv", "env_class"]
