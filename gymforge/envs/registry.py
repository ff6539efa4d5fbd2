"""Environment lookup: built-in ids, or ``package.module:factory`` import paths.

A factory is an ``Environment`` class or a zero-argument callable returning an environment.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError

BUILTIN: dict[str, str] = {
    "ledger": "gymforge.envs.ledger:LedgerEnv",
}

EnvFactory = Callable[[], Any]


def resolve_factory(env: str) -> EnvFactory:
    """The factory behind a built-in id or an import path; UserError if there is none."""
    target = BUILTIN.get(env, env)
    if ":" not in target:
        raise UserError(
            f"unknown environment {env!r}; built-in: {', '.join(sorted(BUILTIN))} "
            "(or give an import path like my_pkg.my_env:make_env)"
        )
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UserError(f"cannot import {module_name!r}: {err}") from err
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UserError(f"{module_name!r} has no callable {attr!r}")
    return factory


def make_env(env: str) -> Environment:
    """A fresh environment instance for ``env`` (built-in id or import path)."""
    instance = resolve_factory(env)()
    if not isinstance(instance, Environment):
        raise UserError(f"{env!r} did not produce an Environment (reset/step/snapshot/close/spec)")
    return instance
