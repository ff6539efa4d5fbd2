"""Verifiers environments as gymforge environments: ``verifiers:MODULE`` (extra ``interop``).

Importing this package imports ``verifiers``; ``gymforge.registry.resolve`` imports it only
when such an id is asked for, so the core install does not need the extra.
"""

from gymforge.envs.verifiers_adapter.env import VerifiersEnv, env_class

__all__ = ["VerifiersEnv", "env_class"]
