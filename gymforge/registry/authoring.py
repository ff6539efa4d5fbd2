"""Errors an environment's author can act on: one or two lines naming file, line and fix.

``import_failure`` turns an exception raised while importing an environment file (a syntax
error, a ``@tool`` without a type hint, a ``NameError``) into a ``UserError`` that points at
the author's line rather than a traceback through gymforge. ``name_the_class`` answers an
environment path without ``:Class`` with the classes the file defines. ``check_hooks``
compares every method a class overrides from a gymforge base class (``init_world``,
``verify``, ``oracle_plan``, ...) with the base's signature, so a wrong hook signature is
refused when the environment is loaded instead of failing inside the first episode.
"""

from __future__ import annotations

import inspect
import os
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.tools.tool import source_location

_CHECKED: set[type] = set()


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


_NOT_USER = (
    str(Path(__file__).resolve().parents[1]),  # gymforge itself
    sysconfig.get_paths()["stdlib"],
)


def _user_frames(err: BaseException) -> list[traceback.FrameSummary]:
    frames = traceback.extract_tb(err.__traceback__)
    return [
        f
        for f in frames
        if not f.filename.startswith("<")  # frozen importlib
        and not str(Path(f.filename).resolve()).startswith(_NOT_USER)
    ]


def in_user_code(err: BaseException) -> bool:
    """Whether ``err`` was raised from (or through) the author's own files."""
    return bool(_user_frames(err))


def import_failure(module_name: str, err: Exception) -> UserError:
    """A ``UserError`` for ``err``, raised while importing the environment module."""
    if isinstance(err, UserError):  # already names its place (a @tool definition, say)
        return UserError(str(err))
    if isinstance(err, SyntaxError):
        where = f"{_short(err.filename or module_name)}:{err.lineno}"
        line = (err.text or "").strip()
        shown = f"\n  {line}" if line else ""
        return UserError(f"{where}: syntax error: {err.msg}{shown}")
    frames = _user_frames(err) or list(traceback.extract_tb(err.__traceback__))
    frame = frames[-1] if frames else None
    where = f"{_short(frame.filename)}:{frame.lineno}" if frame else module_name
    code = f"\n  {frame.line.strip()}" if frame and frame.line else ""
    return UserError(f"{where}: {type(err).__name__} while loading {module_name}: {err}{code}")


def _environments(module: ModuleType) -> list[str]:
    """The classes ``module`` defines that look like environments (public, own module)."""
    names = []
    for name, value in vars(module).items():
        if (
            isinstance(value, type)
            and value.__module__ == module.__name__
            and not name.startswith("_")
            and all(hasattr(value, a) for a in ("reset", "step", "spec"))
        ):
            names.append(name)
    return names


def name_the_class(
    target: str, load: Callable[[str], ModuleType], missing: str | None = None
) -> UserError:
    """The error for ``file.py`` without ``:Class`` (or with a ``:name`` it lacks): which
    classes to name instead."""
    module_name = target
    try:
        found = _environments(load(module_name))
    except Exception:  # cannot load it: the hint alone still helps
        found = []
    head = (
        f"{target} has no callable {missing!r}"
        if missing
        else f"{target} names a file, not the environment in it"
    )
    if found:
        uses = " or ".join(f"{target}:{name}" for name in found[:3])
        return UserError(f"{head}: use {uses}")
    return UserError(f"{head}: add :ClassName, the Environment class (or factory) to load")


def _hook_bases(cls: type) -> list[type]:
    return [
        b
        for b in cls.__mro__[1:]
        if b.__module__.startswith("gymforge.") and b not in (object, Environment)
    ]


def _accepts(override: Callable[..., Any], base: Callable[..., Any]) -> bool:
    """Whether ``override`` can be called every way ``base`` can: the same positional
    arguments, every keyword argument, nothing more required."""
    try:
        mine, theirs = inspect.signature(override), inspect.signature(base)
    except (TypeError, ValueError):
        return True  # builtins and C functions: nothing to compare
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in theirs.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            args.append(None)
        elif p.kind is p.KEYWORD_ONLY and p.default is p.empty:
            kwargs[p.name] = None
        elif p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return True  # a base taking anything: any override goes
    try:
        mine.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _sig(fn: Callable[..., Any]) -> str:
    return str(inspect.signature(fn)).replace("'", "")


def check_hooks(cls: type) -> None:
    """Refuse a class whose override of a gymforge base-class method cannot be called the
    way gymforge calls it (once per class)."""
    if cls in _CHECKED:
        return
    for name, override in vars(cls).items():
        if name.startswith("__") or not inspect.isfunction(override):
            continue
        for base in _hook_bases(cls):
            original = vars(base).get(name)
            if not inspect.isfunction(original):
                continue
            if not _accepts(override, original):
                where = source_location(override)
                wanted = f"def {name}{_sig(original)}"
                raise UserError(
                    f"{where}: {cls.__name__}.{name}{_sig(override)} does not match the "
                    f"hook it overrides ({base.__name__}.{name}); write it as:\n  {wanted}"
                )
            break
    _CHECKED.add(cls)


__all__ = ["check_hooks", "import_failure", "in_user_code", "name_the_class"]
