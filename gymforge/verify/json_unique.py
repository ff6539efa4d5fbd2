"""A Draft 2020-12 validator whose ``uniqueItems`` costs ``O(n log n)`` on hostile input.

``jsonschema`` checks ``uniqueItems`` by sorting the items and, when they do not sort (one
``{}`` among numbers), by comparing every pair in Python: an answer of ten thousand items
then costs tens of seconds of the judge's time. ``Validator`` replaces that keyword: each
item maps to a ``sort_key`` (a total order whose equality is JSON Schema's: ``1`` equals
``1.0``, ``true`` is not ``1``, object key order does not matter), the keys are sorted and
neighbours compared. Nothing is hashed, so values built to collide cannot slow it either.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators

_NULL, _BOOL, _NUMBER, _STRING, _ARRAY, _OBJECT, _OTHER = range(7)


def sort_key(value: Any) -> tuple[Any, ...]:
    """A key that orders any decoded JSON value; two keys are equal exactly when the values
    are equal under JSON Schema. Other Python values (from ``judge_value``) sort last, by
    their ``repr``."""
    if value is None:
        return (_NULL,)
    if isinstance(value, bool):
        return (_BOOL, value)
    if isinstance(value, int | float):
        return (_NUMBER, value)
    if isinstance(value, str):
        return (_STRING, value)
    if isinstance(value, Mapping):
        return (_OBJECT, tuple(sorted((str(k), sort_key(v)) for k, v in value.items())))
    if isinstance(value, Sequence):
        return (_ARRAY, tuple(sort_key(v) for v in value))
    return (_OTHER, repr(value))


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
