"""Helpers that families use to lay out a seed workbook as world rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.utils.cell import get_column_letter

from gymforge.envs.spreadsheet.cells import Value, addr, encode
from gymforge.envs.spreadsheet.truth import SheetTruth, Step

Rows = dict[str, list[dict[str, Any]]]
NOW = "2025-03-03T09:00:00Z"
"""The simulated start time of every spreadsheet task."""
QUARTERS = ["Q1", "Q2", "Q3", "Q4"]
REGIONS = ["North", "South", "East", "West", "Central"]
LETTERS = [get_column_letter(c) for c in range(1, 53)]


class Layout:
    """Seed sheets, cells and names, in the shape ``WorldTruth.world`` holds."""

    def __init__(self) -> None:
        self.sheets: list[str] = []
        self.cells: dict[str, dict[str, Any]] = {}
        self.names: dict[str, str] = {}

    def sheet(self, name: str, grid: Sequence[Sequence[Value]] = ()) -> str:
        """Add a sheet holding ``grid`` from A1 (``None`` cells stay empty). The hot path of
        task generation: plain numbers and text are encoded inline."""
        self.sheets.append(name)
        cells = self.cells
        for i, row in enumerate(grid, 1):
            for j, v in enumerate(row):
                if v is None:
                    continue
                cid = f"{name}!{LETTERS[j]}{i}"
                t = type(v)
                if (t is int or t is float) and not isinstance(v, str | bool):
                    enc: dict[str, Any] = {"kind": "n", "num": float(v), "text": None}
                elif isinstance(v, str) and not v.startswith("#"):
                    enc = {"kind": "s", "num": None, "text": v}
                else:
                    enc = encode(v)
                cells[cid] = {
                    "id": cid,
                    "sheet": name,
                    "row": i,
                    "col": j + 1,
                    **enc,
                    "formula": None,
                    "pivot": None,
                }
        return name

    def put(self, sheet: str, row: int, col: int, value: Value, formula: str | None = None) -> None:
        cid = addr(sheet, row, col)
        if value is None and formula is None:
            self.cells.pop(cid, None)
            return
        self.cells[cid] = {
            "id": cid,
            "sheet": sheet,
            "row": row,
            "col": col,
            **encode(value),
            "formula": formula,
            "pivot": None,
        }

    def rows(self) -> Rows:
        return {
            "sheets": [{"name": s, "pos": i + 1} for i, s in enumerate(self.sheets)],
            "cells": list(self.cells.values()),
            "names": [{"name": k, "ref": v} for k, v in sorted(self.names.items())],
        }


def span(sheet: str, c1: int, r1: int, c2: int, r2: int) -> str:
    """``Sheet!A1:C9`` from 1-based column and row numbers."""
    return f"{sheet}!{get_column_letter(c1)}{r1}:{get_column_letter(c2)}{r2}"


def whole(sheet: str) -> str:
    """Every cell of ``sheet`` as one range."""
    return f"{sheet}!A1:AZ1000"


def targets_of(sheet: str, grid: Sequence[Sequence[Value]], r0: int = 1) -> dict[str, Value]:
    return {addr(sheet, r0 + i, j + 1): v for i, row in enumerate(grid) for j, v in enumerate(row)}


def step(tool: str, **arguments: Any) -> Step:
    """One call of a task's reference solution."""
    return Step(name=tool, arguments=arguments)


def new_sheet_truth(
    book: Layout, sheet: str, out: Sequence[Sequence[Value]], reads: Sequence[str], decoy: str
) -> SheetTruth:
    """The truth of a task whose answer is a new sheet ``sheet`` holding exactly ``out``
    (header row first): nothing else may change, and the reference path reads ``reads``,
    adds the sheet and writes ``out`` into it."""
    return SheetTruth(
        world=book.rows(),
        now=NOW,
        targets=targets_of(sheet, out),
        allowed=[whole(sheet)],
        new_sheets=[sheet],
        exact_sheets=[sheet],
        solution=[
            *(step("read_range", range=r) for r in reads),
            step("add_sheet", name=sheet),
            step("write_range", range=span(sheet, 1, 1, len(out[0]), len(out)), values=out),
        ],
        decoy=decoy,
    )
