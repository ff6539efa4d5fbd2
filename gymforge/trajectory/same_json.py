"""Whether two JSON values have the same canonical text, without encoding either.

The writer encodes a record (strict JSON, before validation) and then the validated model's
dump (the line it writes). The dump is nearly always the record again, number for number;
when it is, the first text is the line, and the second encoding (the costlier half of the
writer's work: a float's shortest text is the slowest thing ``json`` writes) is not needed.
:func:`same_json` decides that exactly: ``canonical_json(a) == canonical_json(b)`` whenever
it returns True (it may return False for values that do encode alike, which only costs the
encoding it would have saved).

Python's ``==`` alone is not enough: ``1 == 1.0 == True`` and ``0.0 == -0.0``, which encode
as ``1``, ``1.0``, ``true``, ``0.0`` and ``-0.0``; validation turns an ``int`` into a
``float`` for a float field and back for an int field. So types are compared too, at every
leaf, and floats bit for bit.
"""

from __future__ import annotations

from array import array
from typing import Any

_SCALARS = frozenset({str, int, bool, type(None)})


def same_json(a: Any, b: Any) -> bool:
    """True only if ``a`` and ``b`` have the same canonical JSON text (module docstring).
    Both must be trees of ``dict`` (``str`` keys), ``list``, ``str``, ``int``, ``float``,
    ``bool`` and ``None``; anything else compares unequal."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if a.keys() != b.keys():
            return False
        for key, value in a.items():  # a loop, not a call per leaf: most leaves are scalars
            other = b[key]
            leaf = type(value)
            if leaf is not type(other):
                return False
            if leaf in _SCALARS:
                if value != other:
                    return False
            elif not same_json(value, other):
                return False
        return True
    if kind is list:
        if len(a) != len(b):
            return False
        types = set(map(type, a))
        if len(types) == 1 and types == set(map(type, b)):  # one type: compared in C
            (only,) = types
            if only is float:
                return array("d", a).tobytes() == array("d", b).tobytes()
            if only in _SCALARS:
                return bool(a == b)
        return all(map(same_json, a, b))
    if kind is float:
        return array("d", (a,)).tobytes() == array("d", (b,)).tobytes()
    if kind in _SCALARS:
        return bool(a == b)
    return False
