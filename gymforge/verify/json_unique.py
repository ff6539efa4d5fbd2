"""A Draft 2020-12 validator whose ``uniqueItems`` costs ``O(n log n)`` on hostile input.

``jsonschema`` checks ``uniqueItems`` by sorting the items and, when they do not sort (one
``{}`` among numbers), by comparing every pair in Python: an answer of ten thousand items
then costs tens of seconds of the judge's time. ``Validator`` replaces that keyword: each
item maps to a ``sort_key`` (a total order whose equality is JSON Schema's: ``1`` equals
``1.0``, ``true`` is not ``1``, object key order does not matter), the keys are sorted and
neighbours compared. A key is a flat sequence of tokens, so comparing two keys costs at
most their length, however deep the items are nested. Nothing is hashed, so values built
to collide cannot slow it either.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators

_NULL, _BOOL, _NUMBER, _STRING, _ARRAY, _OBJECT, _KEY, _END, _OTHER = range(9)
Token = tuple[int, Any]


def sort_key(value: Any) -> tuple[Token, ...]:
    """A key that orders any decoded JSON value; two keys are equal exactly when the values
    are equal under JSON Schema. The key is flat: ``(tag, scalar)`` tokens of the value in
    preorder, an object's members sorted by name, each array and object closed by an end
    token (so the tokens read back one way only). Two keys compare in one pass, however
    deep the values: a key nested as the value is costs a comparison ``depth**2`` steps
    (Python tests each level for equality, then orders it). Other Python values (from
    ``judge_value``) are one token, by their ``repr``."""
    tokens: list[Token] = []
    _tokens(value, tokens)
    return tuple(tokens)


def _tokens(value: Any, out: list[Token]) -> None:
    kind = type(value)  # the decoded types first: an ABC's isinstance costs more
    if kind is str:
        out.append((_STRING, value))
    elif kind is int or kind is float:
        out.append((_NUMBER, value))
    elif kind is list:
        out.append((_ARRAY, len(value)))
        for item in value:
            _tokens(item, out)
        out.append((_END, 0))
    else:
        _other_tokens(value, out)


def _other_tokens(value: Any, out: list[Token]) -> None:
    if value is None:
        out.append((_NULL, 0))
    elif isinstance(value, bool):
        out.append((_BOOL, value))
    elif isinstance(value, int | float):
        out.append((_NUMBER, value))
    elif isinstance(value, str):
        out.append((_STRING, value))
    elif isinstance(value, Mapping):
        out.append((_OBJECT, len(value)))
        for name, item in sorted(((str(k), v) for k, v in value.items()), key=_name):
            out.append((_KEY, name))
            _tokens(item, out)
        out.append((_END, 0))
    elif isinstance(value, Sequence):
        out.append((_ARRAY, len(value)))
        for item in value:
            _tokens(item, out)
        out.append((_END, 0))
    else:
        out.append((_OTHER, repr(value)))


def _name(member: tuple[str, Any]) -> str:
    return member[0]


def all_unique(items: Sequence[Any]) -> bool:
    """Whether no two of ``items`` are equal under JSON Schema (sorting, no pairs)."""
    keys = sorted(sort_key(v) for v in items)
    return all(a != b for a, b in itertools.pairwise(keys))


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if unique and validator.is_type(instance, "array") and not all_unique(instance):
        yield ValidationError(f"the array of {len(instance)} items has non-unique elements")


Validator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"uniqueItems": _unique_items}
)
"""``Draft202012Validator`` with the linear-logarithmic ``uniqueItems``."""
