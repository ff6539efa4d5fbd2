"""The workbook over a ``WorldDB``: sheets, ranges, reading and writing cells.

Every change goes through ``WorldDB.insert/update/delete`` so that snapshots and diffs
track it. Names are resolved here: sheet names case-insensitively (as spreadsheet
applications do), defined names through the ``names`` table.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet.cells import (
    SHEET_RE,
    Box,
    Value,
    addr,
    decode,
    encode,
    parse_box,
    split_sheet,
)
from gymforge.world.db import WorldDB

MAX_CELLS = 2000
"""The most cells one read or write may cover."""


class Book:
    """Cell-level access to one episode's workbook."""

    def __init__(self, db: WorldDB) -> None:
        self.db = db

    # ---- sheets and names -------------------------------------------------------------
    def sheets(self) -> list[str]:
        return [r["name"] for r in self.db.all("SELECT name FROM sheets ORDER BY pos, name")]

    def sheet(self, name: str) -> str:
        """The sheet's name as stored, matched case-insensitively; ``not_found`` if none."""
        row = self.db.one("SELECT name FROM sheets WHERE upper(name) = upper(?)", name)
        if row is None:
            raise ToolError("not_found", f"no sheet {name[:40]!r}; sheets: {self.sheets()}")
        return str(row["name"])

    def add_sheet(self, name: str) -> str:
        if not SHEET_RE.match(name):
            raise ToolError(
                "validation", "a sheet name is a letter then letters, digits or _ (max 31)"
            )
        if self.db.one("SELECT name FROM sheets WHERE upper(name) = upper(?)", name):
            raise ToolError("conflict", f"sheet {name} already exists")
        pos = self.db.scalar("SELECT COALESCE(MAX(pos), 0) + 1 FROM sheets")
        self.db.insert("sheets", {"name": name, "pos": pos})
        return name

    def names(self) -> dict[str, str]:
        return {r["name"]: r["ref"] for r in self.db.all("SELECT * FROM names ORDER BY name")}

    def box(self, ref: str, default_sheet: str | None = None) -> Box:
        """The box ``ref`` (``Sheet!A1:B2``, or a defined name) covers."""
        sheet, part = split_sheet(ref.strip())
        if sheet is None:
            named = self.db.one("SELECT ref FROM names WHERE upper(name) = upper(?)", part.strip())
            if named is not None:
                return self.box(str(named["ref"]))
            if default_sheet is None:
                raise ToolError(
                    "validation", f"{ref[:40]!r}: give the sheet (Sheet!A1:B2) or a defined name"
                )
            sheet = default_sheet
        found = parse_box(part, self.sheet(sheet))
        if found is None:
            raise ToolError("validation", f"{ref[:40]!r} is not a range such as Sheet!A1:C10")
        return found

    # ---- cells --------------------------------------------------------------------------
    def rows_in(self, box: Box) -> list[dict[str, Any]]:
        return self.db.all(
            "SELECT * FROM cells WHERE sheet = ? AND row BETWEEN ? AND ? AND col BETWEEN ? AND ?"
            " ORDER BY row, col",
            box.sheet,
            box.r1,
            box.r2,
            box.c1,
            box.c2,
        )

    def grid(self, box: Box) -> list[list[Value]]:
        """The values of ``box``, row by row (``None`` for empty cells)."""
        out: list[list[Value]] = [[None] * box.width for _ in range(box.height)]
        for row in self.rows_in(box):
            out[row["row"] - box.r1][row["col"] - box.c1] = decode(row)
        return out

    def used(self, sheet: str) -> Box | None:
        """The smallest box holding every non-empty cell of ``sheet``."""
        r = self.db.one(
            "SELECT MIN(row) r1, MIN(col) c1, MAX(row) r2, MAX(col) c2 FROM cells WHERE sheet = ?",
            sheet,
        )
        if r is None or r["r1"] is None:
            return None
        return Box(sheet, 1, 1, r["r2"], r["c2"])

    def put(
        self,
        sheet: str,
        row: int,
        col: int,
        value: Value,
        formula: str | None = None,
        pivot: str | None = None,
    ) -> None:
        """Set one cell (``None`` without a formula empties it)."""
        cid = addr(sheet, row, col)
        old = self.db.get("cells", cid)
        if value is None and formula is None:
            if old is not None:
                self.db.delete("cells", cid)
            return
        fields = {**encode(value), "formula": formula, "pivot": pivot}
        if old is None:
            self.db.insert("cells", {"id": cid, "sheet": sheet, "row": row, "col": col, **fields})
        elif any(old[k] != v for k, v in fields.items()):
            self.db.update("cells", cid, **fields)

    def guard_pivot(self, box: Box, pivot: str | None = None) -> None:
        """Refuse to change cells of a pivot table's output (other than pivot ``pivot``)."""
        for row in self.rows_in(box):
            if row["pivot"] and row["pivot"] != pivot:
                raise ToolError(
                    "conflict",
                    f"{row['id']} is part of pivot table {row['pivot']}; pivot output is read-only",
                )


def check_size(box: Box) -> None:
    if box.height * box.width > MAX_CELLS:
        raise ToolError("validation", f"a range may cover at most {MAX_CELLS} cells")
