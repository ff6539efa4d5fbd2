"""Built-in environments, one folder per domain, and the registry that finds them."""

from gymforge.envs.registry import BUILTIN, make_env, resolve_factory

__all__ = ["BUILTIN", "make_env", "resolve_factory"]
