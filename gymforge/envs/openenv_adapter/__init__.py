"""OpenEnv environments as gymforge environments: ``openenv:http://HOST:PORT`` (extra
``interop``).

Importing this package imports ``openenv``; ``gymforge.registry.resolve`` imports it only when
such an id is asked for, so the core install does not need the extra.
"""

from gymforge.envs.openenv_adapter.env import OpenEnvEnv, env_class

__all__ = ["OpenEnvEnv", "env_class"]
