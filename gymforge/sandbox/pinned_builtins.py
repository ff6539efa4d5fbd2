"""The builtins the in-sandbox harness binds as its own globals before any candidate runs.
Standard library only: copied into every sandbox next to ``wire.py``, like it.
"""

from __future__ import annotations

import builtins
from typing import Any

PINNED = [
    "AttributeError",
    "BaseException",
    "Exception",
    "IndexError",
    "KeyError",
    "NameError",
    "OSError",
    "RecursionError",
    "StopIteration",
    "TypeError",
    "UnicodeDecodeError",
    "ValueError",
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "callable",
    "complex",
    "dict",
    "enumerate",
    "float",
    "frozenset",
    "getattr",
    "hasattr",
    "hash",
    "hex",
    "id",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "print",
    "range",
    "repr",
    "round",
    "set",
    "setattr",
    "sorted",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
]


def pin_builtins(ns: dict[str, Any]) -> None:
    """Bind the builtins the harness uses (``PINNED``) as globals of the module whose
    namespace is ``ns``, before any candidate runs. The candidate runs in the same process as
    the in-sandbox harness (``child``, ``child_calls``, ``wire``, ``plainvalues``) and may
    rebind ``builtins.len``, ``builtins.isinstance``, ``builtins.type``...; a module's own
    globals are looked up before the ``builtins`` module, so the harness keeps the real ones
    and goes on encoding what the candidate returned, answering calls and reporting, whatever
    the candidate rebound."""
    for name in PINNED:
        ns.setdefault(name, getattr(builtins, name))


pin_builtins(globals())
