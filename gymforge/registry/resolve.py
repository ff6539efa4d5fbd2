"""Environment lookup: built-in ids, ``reasoning-gym:NAME``, or ``package.module:factory``
import paths.

A factory is an ``Environment`` class or a zero-argument callable returning an environment.
``reasoning-gym:NAME`` is any reasoning-gym dataset (the optional extra ``interop``); the
adapter is imported only when such an id is resolved.
Mistakes in an environment file are ``UserError``s of one or two lines naming the file, the
line and the fix (``authoring``): a syntax error, an exception while importing it, a missing
``:Class``, a hook whose signature does not match the base class's.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.registry.authoring import check_hooks, import_failure, in_user_code, name_the_class

BUILTIN: dict[str, str] = {
    "ledger": "gymforge.envs.ledger:LedgerEnv",
    "puzzles": "gymforge.envs.puzzles:PuzzlesEnv",
    "math": "gymforge.envs.math.env:MathEnv",
    "code": "gymforge.envs.code:CodeEnv",
    "code-agent": "gymforge.envs.code.agent:CodeAgentEnv",
    "support-desk": "gymforge.envs.support_desk:SupportDeskEnv",
    "expenses": "gymforge.envs.expenses:ExpensesEnv",
    "digits": "gymforge.envs.digits:DigitsEnv",
    "sql": "gymforge.envs.sql:SqlEnv",
    "extract": "gymforge.envs.extract:ExtractEnv",
    "swe": "gymforge.envs.swe:SweEnv",
}

EnvFactory = Callable[[], Any]
REASONING_GYM = "reasoning-gym:"
REASONING_GYM_ADAPTER = "gymforge.envs.reasoning_gym"


REMOTE_CLIENT = "gymforge.serve.client"
"""The module that connects to a served environment; imported only for a ``ws://`` ref (the
serve layer sits above the registry)."""


def _remote_factory(url: str) -> EnvFactory:
    factory: Callable[[str], EnvFactory] = importlib.import_module(REMOTE_CLIENT).remote_factory
    return factory(url)


def reasoning_gym_factory(name: str) -> EnvFactory:
    """The factory of reasoning-gym dataset ``name``; UserError naming the extra when
    reasoning-gym is not installed or has no such dataset."""
    try:
        env_class = importlib.import_module(REASONING_GYM_ADAPTER).env_class
    except ImportError as err:
        raise UserError(
            f"reasoning-gym:{name} needs the optional extra 'interop' "
            f"(pip install 'gymforge[interop]'): {err}"
        ) from err
    factory: EnvFactory = env_class(name)  # the class is the factory; an unknown name fails here
    return factory


def resolve_factory(env: str) -> EnvFactory:
    """The factory behind a built-in id or an import path; UserError if there is none.

    Import paths are ``package.module:attr`` (the current directory is importable, as with
    ``python -m``) or ``path/to/file.py:attr``. ``ws://HOST:PORT`` and ``wss://`` refs name a
    served environment (``gymforge serve``); its token comes from ``$GYMFORGE_TOKEN``.
    """
    if env.startswith(("ws://", "wss://")):
        return _remote_factory(env)
    if env.startswith(REASONING_GYM):
        return reasoning_gym_factory(env[len(REASONING_GYM) :])
    target = BUILTIN.get(env, env)
    if ":" not in target:
        if target.endswith(".py") or Path(target).is_file():
            raise name_the_class(target, load_module)
        raise UserError(
            f"unknown environment {env!r}; built-in: {', '.join(sorted(BUILTIN))} "
            "(or give an import path like my_pkg.my_env:make_env)"
        )
    module_name, _, attr = target.rpartition(":")
    try:
        module = load_module(module_name)
    except Exception as err:  # the author's file failed to run: say where and why
        if env in BUILTIN:
            raise
        if isinstance(err, ImportError) and not in_user_code(err):
            raise UserError(f"cannot import {module_name!r}: {err}") from err
        raise import_failure(module_name, err) from None
    found = getattr(module, attr, None)
    if not callable(found):
        raise name_the_class(module_name, load_module, missing=attr)
    if isinstance(found, type):
        check_hooks(found)
    factory: EnvFactory = found
    return factory


def load_module(module_name: str) -> ModuleType:
    """Import ``package.module`` (the current directory importable) or ``path/to/file.py``."""
    if module_name.endswith(".py"):
        path = Path(module_name).resolve()
        if not path.is_file():
            raise ImportError(f"no such file {module_name}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {module_name}")
        module = sys.modules.get(path.stem)
        if module is None or getattr(module, "__file__", None) != str(path):
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(module_name)


def make_env(env: str) -> Environment:
    """A fresh environment instance for ``env`` (built-in id or import path)."""
    instance = resolve_factory(env)()
    check_hooks(type(instance))
    if not isinstance(instance, Environment):
        raise UserError(f"{env!r} did not produce an Environment (reset/step/snapshot/close/spec)")
    return instance
