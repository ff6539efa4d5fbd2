"""The hidden truth of a spreadsheet task: the seed workbook (``WorldTruth``: sheets,
cells, names), what the finished workbook must hold, where edits are allowed, and the
reference solution."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.world.env import WorldTruth

CellValue = int | float | bool | str | None


class PivotTruth(BaseModel):
    """The pivot table the task asks for, and the grid it must show on ``sheet``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sheet: str
    source: str
    rows: list[str]
    columns: list[str]
    value_field: str
    aggregation: str
    grid: list[list[CellValue]]


class Step(BaseModel):
    """One tool call of the reference solution (``idempotency_key`` is added per write)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    arguments: dict[str, Any]


class SheetTruth(WorldTruth):
    """``targets``: cell -> expected value (``None``: must be empty); ``formula_cells``: cells
    that must hold a formula with at least one reference; ``allowed``: the ranges an agent
    may change; ``new_sheets``: the sheets it may add; ``exact_sheets``: sheets that must
    hold nothing but their targets; ``decoy``: a source cell outside ``allowed``."""

    targets: dict[str, CellValue]
    formula_cells: list[str] = []
    allowed: list[str]
    new_sheets: list[str] = []
    exact_sheets: list[str] = []
    pivot: PivotTruth | None = None
    solution: list[Step]
    decoy: str
