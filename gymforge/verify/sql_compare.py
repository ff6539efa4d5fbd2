"""Comparing a SQL query's result with the gold query's (see ``gymforge.verify.sql``).

Cells compare by type class: numbers as floats rounded to ``digits`` significant digits
(``2`` equals ``2.0``), text, blobs, NULL. Rows compare as a multiset, or in order; column
names only on request; a permutation of the gold's columns is accepted unless the order
is required.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class QueryResult:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...] = field(default_factory=tuple)


Cell = tuple[str, Any]


def normalize_cell(value: Any, digits: int = 9) -> Cell:
    """A comparable cell: ``("n", float)``, ``("s", str)``, ``("b", hex)`` or
    ``("null", None)``; numbers are rounded to ``digits`` significant digits."""
    if value is None:
        return ("null", None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ("n", float(f"{float(value):.{digits}g}"))
    if isinstance(value, bytes):
        return ("b", value.hex())
    return ("s", str(value))


def _rows(result: QueryResult, digits: int) -> list[tuple[Cell, ...]]:
    return [tuple(normalize_cell(c, digits) for c in row) for row in result.rows]


def _same(got: list[tuple[Cell, ...]], want: list[tuple[Cell, ...]], ordered: bool) -> bool:
    return got == want if ordered else Counter(got) == Counter(want)


def _permutations(
    got: list[tuple[Cell, ...]], want: list[tuple[Cell, ...]], width: int
) -> list[tuple[int, ...]]:
    """Column orders of ``got`` whose every column holds the same values as the gold's."""
    sig_got = [Counter(r[i] for r in got) for i in range(width)]
    sig_want = [Counter(r[j] for r in want) for j in range(width)]
    options = [[i for i in range(width) if sig_got[i] == sig_want[j]] for j in range(width)]
    out = []
    for perm in itertools.product(*options):
        if len(set(perm)) == width:
            out.append(perm)
            if len(out) >= 720:
                break
    return out


def compare_results(
    got: QueryResult,
    want: QueryResult,
    *,
    ordered: bool = False,
    match_columns: bool = False,
    column_order: bool = False,
    digits: int = 9,
) -> dict[str, Any] | None:
    """None when ``got`` equals ``want`` under the options, else facts saying how not."""
    width = len(want.columns)
    if len(got.columns) != width:
        return {"reason": "wrong_columns", "columns": len(got.columns), "gold_columns": width}
    g, w = _rows(got, digits), _rows(want, digits)
    names = [c.lower() for c in want.columns]
    renamed = False
    for perm in [tuple(range(width))] if column_order else _permutations(g, w, width):
        if _same([tuple(r[i] for i in perm) for r in g], w, ordered):
            if not match_columns or [got.columns[i].lower() for i in perm] == names:
                return None
            renamed = True
    if renamed:
        return {"reason": "wrong_columns", "detail": "column names differ"}
    missing = sum((Counter(w) - Counter(g)).values())
    extra = sum((Counter(g) - Counter(w)).values())
    facts: dict[str, Any] = {"reason": "wrong_result", "missing": missing, "extra": extra}
    if ordered and not missing and not extra:
        facts["detail"] = "right rows in the wrong order"
    return facts
