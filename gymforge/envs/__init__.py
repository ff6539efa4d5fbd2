"""Built-in environments, one folder per domain. ``gymforge.registry`` finds them by id."""

from gymforge.registry.resolve import BUILTIN, make_env, resolve_factory

__all__ = ["BUILTIN", "make_env", "resolve_factory"]
