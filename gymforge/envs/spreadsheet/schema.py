"""The workbook world's tables: sheets, cells, defined names and pivot tables.

A cell row exists only for a non-empty cell. A formula cell keeps its formula text and its
last computed value (``kind``/``num``/``text``); ``pivot`` names the pivot table a cell is
output of (pivot output is read-only, as in a spreadsheet application).
"""

from __future__ import annotations

from gymforge.world.schema import Column, Schema, table

SCHEMA = Schema(
    (
        table("sheets", "name", "pos:int", pk="name"),
        table(
            "cells",
            Column("id", doc="Sheet!A1"),
            "sheet",
            "row:int",
            "col:int",
            Column("kind", doc="n number, s text, b boolean, e error"),
            Column("num", "REAL"),
            "text",
            "formula",
            "pivot",
            indexes=("sheet",),
        ),
        table("names", "name", "ref", pk="name"),
        table(
            "pivots",
            "id",
            "sheet",
            "source",
            Column("rows", doc="JSON list of header names"),
            Column("columns", doc="JSON list of header names"),
            "value_field",
            "aggregation",
        ),
    )
)
