"""Reading a dataset row's family fields: one clear ValueError per missing or bad field."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

Name = str | int


def field(
    row: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any = ...
) -> Any:
    """``row[key]`` checked against ``kind`` (bools are not ints); ``default`` when absent."""
    if key not in row:
        if default is ...:
            raise ValueError(f"missing field {key!r}")
        return default
    value = row[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise ValueError(f"field {key!r} must be {_names(kinds)}, not a boolean")
    if not isinstance(value, kinds):
        raise ValueError(f"field {key!r} must be {_names(kinds)}, got {type(value).__name__}")
    return value


def int_list(row: Mapping[str, Any], key: str, *, min_len: int = 1) -> list[int]:
    values = field(row, key, list)
    if len(values) < min_len or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"field {key!r} must be a list of at least {min_len} integers")
    return list(values)


def names(row: Mapping[str, Any], key: str) -> list[Name]:
    """A list of distinct node or person names: strings or integers."""
    values = field(row, key, list)
    if not values or not all(
        (isinstance(v, str) and v.strip()) or (isinstance(v, int) and not isinstance(v, bool))
        for v in values
    ):
        raise ValueError(f"field {key!r} must be a non-empty list of names (strings or integers)")
    if len({type(v) for v in values}) > 1:
        raise ValueError(f"field {key!r} mixes string and integer names")
    keys = [key_of(v) for v in values]
    if len(set(keys)) != len(keys):
        raise ValueError(f"field {key!r} names a node twice (names are case-insensitive)")
    return list(values)


def key_of(name: Name) -> str:
    """How a name is matched in an answer: its text, case-insensitive."""
    return str(name).strip().upper()


def _names(kinds: tuple[type, ...]) -> str:
    return " or ".join(
        {
            "int": "an integer",
            "str": "a string",
            "list": "a list",
            "bool": "a boolean",
            "dict": "an object",
        }.get(k.__name__, k.__name__)
        for k in kinds
    )


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
NAMING = ("letters", "integers")
"""How generated graphs name their nodes (version 2 of the graph families)."""


def draw_names(r: random.Random, n: int, naming: str) -> list[Name]:
    """``n`` distinct node names in draw order: single letters (as version 1 drew them) or
    integers from ``1..2n``."""
    if naming == "letters":
        return list(r.sample(LETTERS, n))
    return list(r.sample(range(1, 2 * n + 1), n))


def edge_list(
    row: Mapping[str, Any], key: str, nodes: list[Name], weighted: bool
) -> list[list[Any]]:
    """Edges ``[u, v]`` (``[u, v, w]`` with a positive integer weight) between known nodes."""
    known = {key_of(v): v for v in nodes}
    out: list[list[Any]] = []
    for e in field(row, key, list):
        width = 3 if weighted else 2
        if not isinstance(e, list) or len(e) != width:
            raise ValueError(f"field {key!r}: every edge must be a list of {width} items")
        u, v = known.get(key_of(e[0])), known.get(key_of(e[1]))
        if u is None or v is None or key_of(u) == key_of(v):
            raise ValueError(f"field {key!r}: edge {e[:2]} must join two different known nodes")
        if weighted and (type(e[2]) is not int or e[2] < 1):
            raise ValueError(f"field {key!r}: edge {e[:2]} needs a positive integer weight")
        out.append([u, v, e[2]] if weighted else [u, v])
    return out
