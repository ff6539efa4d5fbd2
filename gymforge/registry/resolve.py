"""Environment lookup: built-in ids, ids that installed packages register (the
``gymforge.environments`` entry points, ``installed``), other frameworks' environments
(``reasoning-gym:NAME``, ``verifiers:MODULE``, ``openenv:URL``), Harbor task directories
(``harbor:PATH``, ``docs/harbor.md``; no extra needed), or ``package.module:factory`` import
paths.

A factory is an ``Environment`` class or a zero-argument callable returning an environment.
The framework adapters (the optional extra ``interop``) are imported only when such an id is
resolved: ``reasoning-gym:NAME`` is a reasoning-gym dataset, ``verifiers:MODULE`` the
Verifiers environment that ``MODULE``'s ``load_environment()`` returns, ``openenv:URL`` the
OpenEnv environment served at ``http://HOST:PORT``.
Mistakes in an environment file are ``UserError``s of one or two lines naming the file, the
line and the fix (``authoring``): a syntax error, an exception while importing it, a missing
``:Class``, a hook whose signature does not match the base class's.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.registry import installed
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
    "crm": "gymforge.envs.crm:CrmEnv",
    "spreadsheet": "gymforge.envs.spreadsheet:SpreadsheetEnv",
    "research": "gymforge.envs.research:ResearchEnv",
    "swe": "gymforge.envs.swe:SweEnv",
}

EnvFactory = Callable[[], Environment]
"""What the registry resolves a name to: an ``Environment`` class or a zero-argument callable
returning one."""
REASONING_GYM = "reasoning-gym:"
REASONING_GYM_ADAPTER = "gymforge.envs.reasoning_gym"
HARBOR = "harbor:"
ADAPTERS: dict[str, str] = {
    REASONING_GYM: REASONING_GYM_ADAPTER,
    "verifiers:": "gymforge.envs.verifiers_adapter",
    "openenv:": "gymforge.envs.openenv_adapter",
    "harbor:": "gymforge.envs.harbor",
}
"""Id prefix -> the adapter package whose ``env_class(rest)`` builds that environment's class."""


REMOTE_CLIENT = "gymforge.serve.client"
"""The module that connects to a served environment; imported only for a ``ws://`` ref (the
serve layer sits above the registry)."""


def _remote_factory(url: str, token: str | None) -> EnvFactory:
    factory: Callable[[str, str | None], EnvFactory] = importlib.import_module(
        REMOTE_CLIENT
    ).remote_factory
    return factory(url, token)


def adapter_factory(prefix: str, name: str) -> EnvFactory:
    """The factory of framework environment ``prefix + name``; UserError naming the extra when
    the framework is not installed (the adapter's own errors name a bad ``name``)."""
    cwd_importable()  # a framework's loader imports the named module by itself
    try:
        env_class = importlib.import_module(ADAPTERS[prefix]).env_class
    except ImportError as err:
        if prefix == HARBOR:  # needs no extra: a failed import is a real error
            raise
        raise UserError(
            f"{prefix}{name} needs the optional extra 'interop' "
            f"(pip install 'gymforge[interop]'): {err}"
        ) from err
    factory: EnvFactory = env_class(name)  # the class is the factory; an unknown name fails here
    return factory


def resolve_factory(env: str, *, token: str | None = None) -> EnvFactory:
    """The factory behind a built-in id or an import path; UserError if there is none.

    Import paths are ``package.module:attr`` (the current directory is importable, as with
    ``python -m``) or ``path/to/file.py:attr``. ``ws://HOST:PORT`` and ``wss://`` refs name a
    served environment (``gymforge serve``); its bearer token is ``token`` (the CLI passes
    ``--token``), else ``$GYMFORGE_TOKEN`` (read by ``gymforge.settings`` when the client is
    made).
    """
    if env.startswith(("ws://", "wss://")):
        return _remote_factory(env, token)
    for prefix in ADAPTERS:
        if env.startswith(prefix):
            return adapter_factory(prefix, env[len(prefix) :])
    target = BUILTIN.get(env, env)
    if ":" not in target:
        if target.endswith(".py") or Path(target).is_file():
            raise name_the_class(target, load_module)
        entry = installed.find(env, frozenset(BUILTIN))  # only ids that are not built-in scan
        if entry is not None:
            return installed.load(entry)
        raise UserError(f"unknown environment {env!r}; {known_ids()}")
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


def recorded_env(env: str, where: str) -> str:
    """``env`` as a record names it (a trajectory file's ``env_id``, a manifest's
    ``run.env``) rather than the user: a file from elsewhere must never choose the code that
    is imported or the server that is called. Only a built-in id, an id an installed
    package registers, or a ``reasoning-gym:`` dataset (a name in the installed adapter's
    table) resolve from a record; a file or import path, ``verifiers:MODULE``,
    ``openenv:URL`` or ``ws://`` is a UserError saying to name it with ``--env``."""
    if env in BUILTIN:
        return env
    dataset = env[len(REASONING_GYM) :] if env.startswith(REASONING_GYM) else ""
    if dataset and all(c.isalnum() or c in "_-" for c in dataset):
        return env
    if all(c.isalnum() or c in "_-." for c in env) and not env.endswith(".py"):
        found = installed.find(env, frozenset(BUILTIN))
        if found is not None and found.problem is None:
            return env
    names_code = ":" in env or env.endswith(".py")
    fix = (
        f"if you trust that code, name it yourself with --env {env}"
        if names_code  # an id alone (a file environment's spec id) is no import path
        else "if it came from a file or an installed package, name it yourself with "
        "--env FILE.py:Class or --env package.module:factory"
    )
    raise UserError(
        f"{where} names the environment {env!r}, which is not a built-in or installed id: a "
        f"file never chooses the code gymforge imports; {fix} (or pass --env with the "
        "environment to use)"
    )


def known_ids() -> str:
    """The ids a user can give, for an error message."""
    usable = sorted(installed.installed(frozenset(BUILTIN)).usable)
    extra = f"; installed: {', '.join(usable)}" if usable else ""
    return (
        f"built-in: {', '.join(sorted(BUILTIN))}{extra} "
        "(or give an import path like my_pkg.my_env:make_env)"
    )


_FILE_LOADS = threading.RLock()


def load_module(module_name: str) -> ModuleType:
    """Import ``package.module`` (the current directory importable) or ``path/to/file.py``.
    Thread-safe: a file being executed by one thread is waited for, never returned half-run
    (workers resolve environments with ``asyncio.to_thread``); a file whose body raises is
    not left in ``sys.modules``."""
    if module_name.endswith(".py"):
        path = Path(module_name).resolve()
        if not path.is_file():
            raise ImportError(f"no such file {module_name}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {module_name}")
        with _FILE_LOADS:  # a module is in sys.modules while its body runs: one loader
            module = sys.modules.get(path.stem)
            if module is None or getattr(module, "__file__", None) != str(path):
                module = importlib.util.module_from_spec(spec)
                sys.modules[path.stem] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(path.stem, None)
                    raise
        return module
    cwd_importable()
    return importlib.import_module(module_name)


def cwd_importable() -> None:
    """Make the current directory importable, as ``python -m`` does. The ``gymforge``
    console script starts with its own directory as ``sys.path[0]`` instead, so a module
    in the current directory (``my_env:MyEnv``, ``verifiers:my_env``) would not be found."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())


def make_env(env: str, *, token: str | None = None) -> Environment:
    """A fresh environment instance for ``env`` (built-in id or import path; ``token``: a
    ``ws://`` server's, see ``resolve_factory``)."""
    instance = resolve_factory(env, token=token)()
    check_hooks(type(instance))
    if not isinstance(instance, Environment):
        raise UserError(f"{env!r} did not produce an Environment (reset/step/snapshot/close/spec)")
    return instance
