"""Cell addresses, ranges and typed values: the workbook's vocabulary.

A cell is addressed ``Sheet!B7``; a range ``Sheet!B2:D9`` (a ``Box``). Sheet names are
plain identifiers (``[A-Za-z][A-Za-z0-9_]*``), so formulas never need quoted sheet names.
A value is a number (``int`` when integral, else ``float``), text, a boolean, an error
(text starting with ``#``, kind ``e``) or ``None`` for an empty cell. Rows of the
``cells`` table hold it as ``kind`` + ``num`` + ``text``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from openpyxl.utils.cell import column_index_from_string, get_column_letter

from gymforge.core.errors import ToolError

Value = int | float | str | bool | None
MAX_ROWS = 1000
MAX_COLS = 52
SHEET_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
_CELL = r"\$?([A-Za-z]{1,3})\$?(\d{1,7})"
CELL_RE = re.compile(rf"^{_CELL}$")
RANGE_RE = re.compile(rf"^{_CELL}(?::{_CELL})?$")
ERRORS = frozenset({"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"})


@dataclass(frozen=True, order=True)
class Box:
    """A rectangle of cells on one sheet, 1-based and inclusive."""

    sheet: str
    r1: int
    c1: int
    r2: int
    c2: int

    @property
    def height(self) -> int:
        return self.r2 - self.r1 + 1

    @property
    def width(self) -> int:
        return self.c2 - self.c1 + 1

    def contains(self, sheet: str, row: int, col: int) -> bool:
        return (
            sheet.upper() == self.sheet.upper()
            and self.r1 <= row <= self.r2
            and self.c1 <= col <= self.c2
        )

    def cells(self) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.r1, self.r2 + 1) for c in range(self.c1, self.c2 + 1)]

    def a1(self) -> str:
        start = f"{get_column_letter(self.c1)}{self.r1}"
        if (self.r1, self.c1) == (self.r2, self.c2):
            return f"{self.sheet}!{start}"
        return f"{self.sheet}!{start}:{get_column_letter(self.c2)}{self.r2}"


def addr(sheet: str, row: int, col: int) -> str:
    """``Sheet!B7``: a cell's id in the ``cells`` table."""
    return f"{sheet}!{get_column_letter(col)}{row}"


def split_sheet(text: str) -> tuple[str | None, str]:
    """``("Sheet", "B2:C3")`` from ``Sheet!B2:C3`` (quotes around the sheet are dropped)."""
    if "!" not in text:
        return None, text
    sheet, ref = text.rsplit("!", 1)
    return sheet.strip("'"), ref


def parse_box(text: str, sheet: str) -> Box | None:
    """The box of an A1 reference (``B2``, ``$B$2:D9``) on ``sheet``; None if ``text`` is
    not an A1 reference (a defined name, say). Out-of-bounds references are an error."""
    m = RANGE_RE.match(text.strip())
    if m is None:
        return None
    c1, r1 = column_index_from_string(m.group(1).upper()), int(m.group(2))
    c2, r2 = c1, r1
    if m.group(3):
        c2, r2 = column_index_from_string(m.group(3).upper()), int(m.group(4))
    r1, r2 = sorted((r1, r2))
    c1, c2 = sorted((c1, c2))
    if r1 < 1 or r2 > MAX_ROWS or c2 > MAX_COLS:
        raise ToolError(
            "validation", f"{text[:40]!r} is outside the grid (rows 1-{MAX_ROWS}, columns A-AZ)"
        )
    return Box(sheet, r1, c1, r2, c2)


def clean_number(value: float) -> int | float:
    """An integral float as ``int`` (so ``3.0`` renders as ``3``), other floats as they are."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def encode(value: Value) -> dict[str, Any]:
    """A value as the ``kind``/``num``/``text`` columns of its cell row."""
    if isinstance(value, bool):
        return {"kind": "b", "num": float(value), "text": None}
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return {"kind": "e", "num": None, "text": "#NUM!"}
        return {"kind": "n", "num": float(value), "text": None}
    if isinstance(value, str):
        return {"kind": "e" if value in ERRORS else "s", "num": None, "text": value}
    raise ToolError("validation", f"a cell holds a number, text or a boolean, not {value!r:.40}")


def decode(row: dict[str, Any]) -> Value:
    """The value of a cell row."""
    kind = row["kind"]
    if kind == "n":
        return clean_number(float(row["num"]))
    if kind == "b":
        return bool(row["num"])
    if kind in ("s", "e"):
        return str(row["text"])
    return None


def same_value(got: Value, want: Value) -> bool:
    """Equal as a checker of spreadsheet results means it: numbers within a relative 1e-9
    (or 1e-9 absolute near zero), everything else exactly; ``True`` is not ``1``."""
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    if isinstance(got, int | float) and isinstance(want, int | float):
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    return got == want
