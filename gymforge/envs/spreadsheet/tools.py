"""The spreadsheet tools: the tool surface of ``SpreadsheetEnv`` over the workbook.

Reads show values (and the formulas behind them); writes go through ``world_write``
(idempotency keys, savepoints, world faults) and end with a recalculation of every formula
by the engine (``gymforge.envs.spreadsheet.engine``).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from openpyxl.utils.cell import column_index_from_string

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet.cells import Box, Value, addr, decode
from gymforge.envs.spreadsheet.engine import (
    CACHE,
    Recalculation,
    compile_formula,
    fill_down,
    recalc,
)
from gymforge.envs.spreadsheet.limits import (
    MAX_BOOK_TEXT,
    MAX_FILL,
    MAX_FILL_TEXT,
    MAX_FORMULA_CELLS,
    MAX_TEXT,
)
from gymforge.envs.spreadsheet.pivot import AGGREGATIONS, pivot_grid
from gymforge.envs.spreadsheet.truth import SheetTruth
from gymforge.envs.spreadsheet.workbook import Book, check_size
from gymforge.envs.spreadsheet.xlsx import export_workbook
from gymforge.tools import tool
from gymforge.world.env import WorldToolEnv
from gymforge.world.writes import world_read, world_write

Result = dict[str, Any]
CellIn = int | float | str | bool | None
OPS = ("=", "!=", ">", ">=", "<", "<=", "contains", "blank", "nonblank")


def _sort_key(v: Value) -> tuple[int, float, str]:
    if v is None or v == "":
        return (3, 0.0, "")
    if isinstance(v, bool):
        return (2, float(v), "")
    if isinstance(v, int | float):
        return (0, float(v), "")
    return (1, 0.0, str(v).lower())


def _number(text: str) -> float | None:
    try:
        x = float(text.replace(",", ""))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _matches(v: Value, op: str, want: str) -> bool:
    if op == "blank":
        return v is None or v == ""
    if op == "nonblank":
        return not (v is None or v == "")
    if op == "contains":
        return str(want).lower() in str(v if v is not None else "").lower()
    num = _number(want)
    if num is not None and isinstance(v, int | float) and not isinstance(v, bool):
        x, y = float(v), num
        return {"=": x == y, "!=": x != y, ">": x > y, ">=": x >= y, "<": x < y, "<=": x <= y}[op]
    if isinstance(v, str) and num is None:
        a, b = v.lower(), want.lower()
        return {"=": a == b, "!=": a != b, ">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]
    return op == "!="


def _errors(done: Recalculation, most: int = 10) -> Result:
    """The cells a limit of the formula engine turned into an error value, with why (only
    when there are any, so ordinary results keep their shape)."""
    if not done.errors:
        return {}
    return {"errors": dict(list(done.errors.items())[:most])}


class SheetTools(WorldToolEnv[SheetTruth]):
    """The tool surface of ``SpreadsheetEnv``."""

    max_write_text = MAX_TEXT  # a cell holds Excel's text (formulas have their own bounds)

    @property
    def book(self) -> Book:
        return Book(self.db)

    def _column(self, box: Box, column: str, header: bool) -> int:
        """A column of ``box`` by header name or letter, as a 0-based offset."""
        if header:
            labels = [
                str(v).strip().lower()
                for v in self.book.grid(Box(box.sheet, box.r1, box.c1, box.r1, box.c2))[0]
            ]
            if column.strip().lower() in labels:
                return labels.index(column.strip().lower())
        if column.isalpha() and len(column) <= 2:
            off = column_index_from_string(column.upper()) - box.c1
            if 0 <= off < box.width:
                return int(off)
        raise ToolError("validation", f"no column {column[:40]!r} in {box.a1()}")

    @tool
    @world_read
    def list_sheets(self) -> Result:
        """List the workbook's sheets with their used ranges, and its defined names."""
        self.note(read=True)
        book = self.book
        sheets = []
        for name in book.sheets():
            used = book.used(name)
            sheets.append({"name": name, "used_range": used.a1() if used else None})
        return {"sheets": sheets, "names": book.names()}

    @tool
    @world_read
    def read_range(self, range: str) -> Result:
        """Read the values of a range, with the formula behind every formula cell.

        Args:
            range: A range such as Sheet!A1:D20, or a defined name.
        """
        box = self.book.box(range)
        check_size(box)
        self.note(read=True, range=box.a1())
        rows = self.book.rows_in(box)
        return {
            "range": box.a1(),
            "values": self.book.grid(box),
            "formulas": {r["id"]: r["formula"] for r in rows if r["formula"]},
            "pivot_cells": sorted({r["pivot"] for r in rows if r["pivot"]}),
        }

    @tool
    @world_read
    def filter(
        self, range: str, column: str, op: str, value: str = "", header: bool = True
    ) -> Result:
        """Show the rows of a table whose column passes a test (the sheet is not changed).

        Args:
            range: The table, such as Sales!A1:D80.
            column: The column to test: its header name, or its letter.
            op: One of =, !=, >, >=, <, <=, contains, blank, nonblank.
            value: What to compare with: a number compares with numbers, text with text
                (case-insensitively); not needed for blank and nonblank.
            header: Whether the first row of the range is a header row.
        """
        if op not in OPS:
            raise ToolError("validation", f"op must be one of {list(OPS)}")
        box = self.book.box(range)
        check_size(box)
        self.note(read=True, range=box.a1())
        j = self._column(box, column, header)
        grid = self.book.grid(box)
        body = grid[1:] if header else grid
        start = box.r1 + 1 if header else box.r1
        hits = [
            {"row": start + i, "values": row}
            for i, row in enumerate(body)
            if _matches(row[j], op, value)
        ]
        return {"header": grid[0] if header else None, "rows": hits[:200], "matched": len(hits)}

    @tool(writes=True)
    @world_write
    def write_range(
        self, range: str, values: list[list[CellIn]], idempotency_key: str = ""
    ) -> Result:
        """Write constant values into a range (null empties a cell). A single cell as the range
        anchors the values at that cell.

        Args:
            range: The target range such as Clean!A1:C20, or its top-left cell.
            values: The rows of values; every row as long as the range is wide.
            idempotency_key: A key that makes retries of this write safe.
        """
        book = self.book
        box = book.box(range)
        if not values or not values[0]:
            raise ToolError("validation", "values must be a non-empty list of rows")
        width = len(values[0])
        if any(len(row) != width for row in values):
            raise ToolError("validation", "every row of values must have the same length")
        if box.height == box.width == 1:
            box = Box(box.sheet, box.r1, box.c1, box.r1 + len(values) - 1, box.c1 + width - 1)
            check_size(box)
            box = book.box(box.a1())  # inside the grid
        if (box.height, box.width) != (len(values), width):
            raise ToolError(
                "validation",
                f"{box.a1()} is {box.height}x{box.width} but values are {len(values)}x{width}",
            )
        check_size(box)
        book.guard_pivot(box)
        for i, row in enumerate(values):
            for j, v in enumerate(row):
                if isinstance(v, str) and v.startswith("="):
                    raise ToolError("validation", "write_range writes constants; use set_formula")
                if isinstance(v, str) and len(v) > MAX_TEXT:
                    raise ToolError("validation", f"a cell holds at most {MAX_TEXT} characters")
                book.put(box.sheet, box.r1 + i, box.c1 + j, v)
        self.note(range=box.a1())
        done = recalc(book)
        return {
            "range": box.a1(),
            "cells": box.height * box.width,
            "recalculated": done.changed,
            **_errors(done),
        }

    @tool(writes=True)
    @world_write
    def set_formula(self, range: str, formula: str, idempotency_key: str = "") -> Result:
        """Enter a formula. Over a range, the formula is written for the top-left cell and
        filled across the range with its relative references shifted, as a spreadsheet's
        fill-down does ($-anchored references stay).

        Args:
            range: The cell or range, such as Orders!D2 or Orders!D2:D40.
            formula: The formula for the top-left cell, starting with =, e.g. =B2*C2.
            idempotency_key: A key that makes retries of this write safe.
        """
        book = self.book
        box = book.box(range)
        check_size(box)
        book.guard_pivot(box)
        if box.height * box.width > MAX_FILL:
            raise ToolError("validation", f"a formula fills at most {MAX_FILL} cells per call")
        others = book.db.all(
            "SELECT LENGTH(formula) n FROM cells WHERE formula IS NOT NULL AND NOT (sheet = ?"
            " AND row BETWEEN ? AND ? AND col BETWEEN ? AND ?)",
            box.sheet,
            box.r1,
            box.r2,
            box.c1,
            box.c2,
        )
        if len(others) + box.height * box.width > MAX_FORMULA_CELLS:
            raise ToolError(
                "validation", f"a workbook holds at most {MAX_FORMULA_CELLS} formula cells"
            )
        compile_formula(formula)
        filled = list(fill_down(box, formula))
        if sum(r["n"] for r in others) + sum(len(t) for _, _, t in filled) > MAX_BOOK_TEXT:
            raise ToolError(
                "validation", f"a workbook holds at most {MAX_BOOK_TEXT} characters of formulas"
            )
        fresh = {t for _, _, t in filled if t not in CACHE}
        if sum(len(t) for t in fresh) > MAX_FILL_TEXT:
            raise ToolError(
                "validation",
                f"this fill would compile {len(fresh)} distinct formulas; a call compiles at"
                f" most {MAX_FILL_TEXT} characters of formula text (anchor references with $"
                " or fill fewer cells)",
            )
        for text in fresh:
            compile_formula(text)
        for r, c, text in filled:
            book.put(box.sheet, r, c, 0, formula=text)
        self.note(range=box.a1())
        done = recalc(book)
        first = book.db.get("cells", addr(box.sheet, box.r1, box.c1))
        return {
            "range": box.a1(),
            "cells": box.height * box.width,
            "value": decode(first) if first else None,
            **_errors(done),
        }

    @tool(writes=True)
    @world_write
    def create_pivot(
        self,
        source: str,
        rows: list[str],
        columns: list[str],
        values: str,
        aggregation: str,
        target: str = "Pivot",
        idempotency_key: str = "",
    ) -> Result:
        """Create a pivot table of a source table on a new sheet, placed at its A1: one row per
        row-field key, one column per column-field key, totals in a Grand Total row/column.

        Args:
            source: The source table with its header row, e.g. Sales!A1:D80, or a defined name.
            rows: The header names of the row fields (at least one).
            columns: The header names of the column fields (may be empty).
            values: The header name of the field to aggregate.
            aggregation: sum, count, average, min or max.
            target: The name of the new sheet that holds the pivot table.
            idempotency_key: A key that makes retries of this write safe.
        """
        if aggregation not in AGGREGATIONS:
            raise ToolError("validation", f"aggregation must be one of {list(AGGREGATIONS)}")
        book = self.book
        box = book.box(source)
        check_size(box)
        grid = pivot_grid(book.grid(box), rows, columns, values, aggregation)
        sheet = book.add_sheet(target)
        pid = f"PV{book.db.scalar('SELECT COUNT(*) FROM pivots') + 1}"
        book.db.insert(
            "pivots",
            {
                "id": pid,
                "sheet": sheet,
                "source": box.a1(),
                "rows": json.dumps(rows),
                "columns": json.dumps(columns),
                "value_field": values,
                "aggregation": aggregation,
            },
        )
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if v is not None:
                    book.put(sheet, i + 1, j + 1, v, pivot=pid)
        out = Box(sheet, 1, 1, len(grid), len(grid[0]))
        self.note(range=out.a1())
        return {"pivot": pid, "range": out.a1(), "rows": len(grid), "columns": len(grid[0])}

    @tool(writes=True)
    @world_write
    def sort(
        self,
        range: str,
        by: str,
        descending: bool = False,
        header: bool = True,
        idempotency_key: str = "",
    ) -> Result:
        """Sort the rows of a range of constants by one column (numbers, then text, then
        booleans, blanks last; ties keep their order).

        Args:
            range: The range to sort, such as Clean!A1:C30.
            by: The column to sort by: its header name, or its letter.
            descending: Largest first.
            header: Whether the first row is a header row (it stays in place).
            idempotency_key: A key that makes retries of this write safe.
        """
        book = self.book
        box = book.box(range)
        check_size(box)
        book.guard_pivot(box)
        if any(r["formula"] for r in book.rows_in(box)):
            raise ToolError("validation", f"{box.a1()} holds formulas; sort a range of constants")
        j = self._column(box, by, header)
        grid = book.grid(box)
        head, body = (grid[:1], grid[1:]) if header else ([], grid)
        filled = [row for row in body if row[j] is not None and row[j] != ""]
        blank = [row for row in body if row[j] is None or row[j] == ""]
        filled.sort(key=lambda row: _sort_key(row[j]), reverse=descending)
        for i, row in enumerate([*head, *filled, *blank]):
            for k, v in enumerate(row):
                book.put(box.sheet, box.r1 + i, box.c1 + k, v)
        self.note(range=box.a1())
        done = recalc(book)
        return {"range": box.a1(), "rows": len(body), "recalculated": done.changed, **_errors(done)}

    @tool(writes=True)
    @world_write
    def add_sheet(self, name: str, idempotency_key: str = "") -> Result:
        """Add an empty sheet at the end of the workbook.

        Args:
            name: The sheet's name: a letter, then letters, digits or _ (at most 31).
            idempotency_key: A key that makes retries of this write safe.
        """
        sheet = self.book.add_sheet(name)
        self.note(sheet=sheet)
        return {"sheet": sheet, "sheets": self.book.sheets()}

    @tool
    @world_read
    def export_xlsx(self) -> Result:
        """Export the workbook as an .xlsx file (constants, formulas, defined names; pivot
        tables as their values) and report the file."""
        blob = export_workbook(self.book, self.db.now())
        return {
            "file": "workbook.xlsx",
            "bytes": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest(),
            "sheets": self.book.sheets(),
        }
