"""Pivot tables, computed from a source table (a header row, then records).

The layout is the classic one, placed at A1 of the pivot's own sheet:

- with column fields: a header row ``[*row fields, *column keys, "Grand Total"]``, one row
  per row key ``[*key, *cells, row total]`` and a last row ``["Grand Total", ..., column
  totals, grand total]``;
- without: a header row ``[*row fields, "<Aggregation> of <value field>"]``, one row per
  row key and a ``Grand Total`` row.

Keys are sorted (numbers before text); a combination with no records is an empty cell.
``sum``, ``average``, ``min`` and ``max`` read the numbers among the values; ``count``
counts the non-empty ones. Totals aggregate the records themselves (an average of averages
would be wrong). Task truth and the verifier call the same ``pivot_grid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet.cells import Value, clean_number

Aggregation = Literal["sum", "count", "average", "min", "max"]
AGGREGATIONS: tuple[Aggregation, ...] = ("sum", "count", "average", "min", "max")
LABEL = {"sum": "Sum", "count": "Count", "average": "Average", "min": "Min", "max": "Max"}
TOTAL = "Grand Total"
Key = tuple[Value, ...]


def aggregate(values: Sequence[Value], how: str) -> Value:
    """One aggregated cell; ``None`` when there is nothing to aggregate."""
    if how == "count":
        n = sum(v is not None and v != "" for v in values)
        return n or None
    nums = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if not nums:
        return None
    if how == "sum":
        return clean_number(round(sum(nums), 9))
    if how == "average":
        return clean_number(round(sum(nums) / len(nums), 9))
    return clean_number(min(nums) if how == "min" else max(nums))


def _order(key: Key) -> tuple[tuple[int, float, str], ...]:
    return tuple((0, float(v), "") if isinstance(v, int | float) else (1, 0.0, str(v)) for v in key)


def _fields(header: Sequence[Value], names: Sequence[str]) -> list[int]:
    labels = [str(h).strip().lower() if h is not None else "" for h in header]
    out = []
    for name in names:
        if name.strip().lower() not in labels:
            raise ToolError(
                "validation", f"no column {name[:40]!r} in the source header {list(header)}"
            )
        out.append(labels.index(name.strip().lower()))
    return out


def pivot_grid(
    table: Sequence[Sequence[Value]],
    rows: Sequence[str],
    columns: Sequence[str],
    value_field: str,
    how: str,
) -> list[list[Value]]:
    """The pivot of ``table`` (header row first). Errors are ``ToolError``s (validation)."""
    if how not in AGGREGATIONS:
        raise ToolError("validation", f"aggregation must be one of {list(AGGREGATIONS)}")
    if not rows:
        raise ToolError("validation", "a pivot needs at least one row field")
    if len(table) < 2:
        raise ToolError("validation", "the source needs a header row and at least one record")
    header = table[0]
    ri, ci = _fields(header, rows), _fields(header, columns)
    (vi,) = _fields(header, [value_field])
    records = [r for r in table[1:] if any(v is not None for v in r)]
    groups: dict[tuple[Key, Key], list[Value]] = {}
    by_row: dict[Key, list[Value]] = {}
    by_col: dict[Key, list[Value]] = {}
    for rec in records:
        rk, ck = tuple(rec[i] for i in ri), tuple(rec[i] for i in ci)
        groups.setdefault((rk, ck), []).append(rec[vi])
        by_row.setdefault(rk, []).append(rec[vi])
        by_col.setdefault(ck, []).append(rec[vi])
    row_keys = sorted(by_row, key=_order)
    everything = [rec[vi] for rec in records]
    label = [str(h) for h in (header[i] for i in ri)]
    if not columns:
        out: list[list[Value]] = [[*label, f"{LABEL[how]} of {header[vi]}"]]
        out += [[*k, aggregate(by_row[k], how)] for k in row_keys]
        out.append([TOTAL, *[None] * (len(rows) - 1), aggregate(everything, how)])
        return out
    col_keys = sorted(by_col, key=_order)
    heads: list[Value] = [k[0] if len(k) == 1 else " / ".join(map(str, k)) for k in col_keys]
    out = [[*label, *heads, TOTAL]]
    for k in row_keys:
        cells = [aggregate(groups.get((k, c), []), how) for c in col_keys]
        out.append([*k, *cells, aggregate(by_row[k], how)])
    totals = [aggregate(by_col[c], how) for c in col_keys]
    out.append([TOTAL, *[None] * (len(rows) - 1), *totals, aggregate(everything, how)])
    return out
