"""Refusing a ``ToolEnv`` subclass whose class-level declarations cannot be what it meant.

Tooling reads an environment's declarations by name (``qa``, ``tasks``, ``budget``, ...;
see ``gymforge.core.capabilities``). A misspelt name (``qa_ = QAProfile(...)``) or a
declaration of the wrong kind (``qa = {...}``) would silently fall back to the default, so
:func:`check_declarations` refuses both when the class is defined, naming the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymforge.core.capabilities import CAPABILITIES
from gymforge.core.errors import UserError
from gymforge.qa_profile import QA


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _is_value(value: Any) -> bool:
    """A plain class attribute (not a method, property, class or other descriptor)."""
    return not (callable(value) or hasattr(value, "__get__") or isinstance(value, type))


def _distinct(kind: type) -> bool:
    """A gymforge type whose instances mean one declaration (not ``str``, say)."""
    return kind.__module__.startswith("gymforge.")


def check_declarations(cls: type, declared: Mapping[str, type]) -> None:
    """Refuse ``cls`` when one of its own class attributes

    - is a declared name holding a value of the wrong type (``qa`` not a ``QAProfile``);
    - is not known to any base class but is a declared or capability name up to case and
      underscores (``qa_``, ``QA``, ``Tasks``);
    - is not known to any base class and holds a value of a declared type (``profile =
      QAProfile(...)``): tooling reads a ``QAProfile`` only from ``qa``.

    ``declared`` maps each declared name to the type its value must have."""
    known = {*declared, *(m for cap in (*CAPABILITIES, QA) for m in cap.attributes)}
    by_norm = {_norm(n): n for n in known}
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        want = declared.get(name)
        if want is not None:
            if _is_value(value) and not isinstance(value, want):
                raise UserError(
                    f"{cls.__qualname__}.{name} must be a {want.__name__}, "
                    f"got {type(value).__name__}"
                )
            continue
        if name in known or any(name in vars(base) for base in cls.__mro__[1:]):
            continue
        meant = by_norm.get(_norm(name))
        if meant is None and _is_value(value):
            meant = next(
                (n for n, t in declared.items() if _distinct(t) and isinstance(value, t)), None
            )
        if meant is not None:
            raise UserError(
                f"{cls.__qualname__}.{name} is not a declaration gymforge reads; "
                f"did you mean {meant!r}?"
            )
