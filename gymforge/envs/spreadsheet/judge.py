"""The spreadsheet verifier: facts about the final workbook, never reward.

- ``no_change``: nothing was changed;
- ``collateral``: a cell changed outside the task's allowed ranges, a sheet was added that
  the task does not ask for, or a defined name or pivot appeared where none was asked for
  (``gymforge.world.verify.stray_findings``);
- ``outcome``: a target cell's value (computed by the formula engine for formula cells)
  differs from the truth, or an output sheet holds cells beyond its targets;
- ``policy``: a cell that must be a formula holds a typed-in value, a formula without any
  reference (``=1234``), or a formula whose value does not follow the data it reads as the
  task's reference formula does when that data is perturbed (``depends``); the pivot
  sheet holds no pivot table (values pasted instead), or
  the pivot's definition, recomputed from the source as it now stands, or its output cells
  differ from the expected grid;
- ``process``: the written process rules over the action log.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gymforge.core.errors import ToolError
from gymforge.core.verdict import Verdict
from gymforge.envs.spreadsheet.cells import (
    Box,
    Value,
    addr,
    decode,
    parse_box,
    same_value,
    split_sheet,
)
from gymforge.envs.spreadsheet.depends import data_blind
from gymforge.envs.spreadsheet.engine import references
from gymforge.envs.spreadsheet.pivot import pivot_grid
from gymforge.envs.spreadsheet.policy import PROCESS_RULES
from gymforge.envs.spreadsheet.truth import PivotTruth, SheetTruth
from gymforge.envs.spreadsheet.workbook import Book
from gymforge.verify.rules import Event, check_rules
from gymforge.world.verify import Finding, from_violations, stray_findings, verdict_of

MAX_LISTED = 6


def _boxes(ranges: Sequence[str]) -> list[Box]:
    """The task's allowed ranges (always ``Sheet!A1:B2`` in truth)."""
    out = []
    for ref in ranges:
        sheet, part = split_sheet(ref)
        box = parse_box(part, sheet or "")
        if box is not None:
            out.append(box)
    return out


def _listed(items: Sequence[str]) -> str:
    more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return ", ".join(items[:MAX_LISTED]) + more


def _collateral(book: Book, truth: SheetTruth) -> list[Finding]:
    diff = book.db.diff()
    boxes = _boxes(truth.allowed)
    news = {s.upper() for s in truth.new_sheets}
    out = stray_findings(
        diff,
        "cells",
        lambda r: any(b.contains(str(r["sheet"]), int(r["row"]), int(r["col"])) for b in boxes),
    )
    out += stray_findings(diff, "sheets", lambda r: str(r["name"]).upper() in news)
    out += stray_findings(diff, "names", lambda r: False)
    want_pivot = truth.pivot.sheet.upper() if truth.pivot else None
    out += stray_findings(diff, "pivots", lambda r: str(r["sheet"]).upper() == want_pivot)
    return out


def _cells(book: Book) -> dict[str, dict[str, Any]]:
    return {r["id"].upper(): r for r in book.db.all("SELECT * FROM cells")}


def _outcome(cells: Mapping[str, dict[str, Any]], truth: SheetTruth) -> tuple[list[Finding], int]:
    wrong: list[str] = []
    right = 0
    for cid, want in truth.targets.items():
        row = cells.get(cid.upper())
        got: Value = decode(row) if row is not None else None
        if same_value(got, want):
            right += 1
        else:
            wrong.append(f"{cid} = {got!r} (want {want!r})")
    out = [Finding("outcome", f"wrong values: {_listed(wrong)}")] if wrong else []
    for sheet in truth.exact_sheets:
        prefix = f"{sheet.upper()}!"
        wanted = {c.upper() for c in truth.targets}
        extra = sorted(c for c in cells if c.startswith(prefix) and c not in wanted)
        if extra:
            out.append(
                Finding("outcome", f"{sheet} holds cells beyond the result: {_listed(extra)}")
            )
    return out, right


def _formulas(book: Book, cells: Mapping[str, dict[str, Any]], truth: SheetTruth) -> list[Finding]:
    typed, constant, live = [], [], []
    for cid in truth.formula_cells:
        row = cells.get(cid.upper())
        formula = row["formula"] if row else None
        if not formula:
            typed.append(cid)
        elif not references(formula):
            constant.append(cid)
        elif same_value(decode(row), truth.targets.get(cid)) if row else False:
            live.append(cid)  # a wrong value is an ``outcome`` finding already
    out = []
    blind = data_blind(book, truth, live)
    if blind:
        out.append(
            Finding(
                "policy",
                "formulas whose values do not depend on the data as the task asks (changing "
                f"the data they read does not change them the way it should): {_listed(blind)}",
            )
        )
    if typed:
        out.append(
            Finding("policy", f"hard-coded values where a formula is required: {_listed(typed)}")
        )
    if constant:
        out.append(
            Finding("policy", f"formulas without references (constants): {_listed(constant)}")
        )
    return out


def _pivot(book: Book, cells: Mapping[str, dict[str, Any]], want: PivotTruth) -> list[Finding]:
    found = book.db.one("SELECT * FROM pivots WHERE upper(sheet) = upper(?)", want.sheet)
    if found is None:
        return [Finding("policy", f"no pivot table on sheet {want.sheet} (values pasted?)")]
    try:
        source = book.box(found["source"])
        grid = pivot_grid(
            book.grid(source),
            json.loads(found["rows"]),
            json.loads(found["columns"]),
            found["value_field"],
            found["aggregation"],
        )
    except ToolError as err:
        return [Finding("policy", f"the pivot table no longer computes: {err.message}")]
    if len(grid) != len(want.grid) or any(
        len(a) != len(b) or not all(same_value(x, y) for x, y in zip(a, b, strict=True))
        for a, b in zip(grid, want.grid, strict=False)
    ):
        return [Finding("policy", "the pivot table's definition does not give the asked-for table")]
    sheet = str(found["sheet"])
    shown = Box(sheet, 1, 1, len(grid), len(grid[0]))
    for r, c in shown.cells():
        row = cells.get(addr(sheet, r, c).upper())
        got = decode(row) if row else None
        if not same_value(got, grid[r - 1][c - 1]) or (
            row is not None and row["pivot"] != found["id"]
        ):
            return [Finding("policy", f"pivot output changed at {addr(sheet, r, c)}")]
    extra = sorted(
        cid
        for cid, row in cells.items()
        if row["sheet"] == sheet and not shown.contains(sheet, row["row"], row["col"])
    )
    if extra:
        return [Finding("policy", f"{sheet} holds cells beside the pivot: {_listed(extra)}")]
    return []


def judge(book: Book, truth: SheetTruth, log: Sequence[Event]) -> Verdict:
    """The verdict on the workbook ``book`` holds at the end of an episode."""
    diff = book.db.diff()
    cells = _cells(book)
    findings: list[Finding] = []
    if not diff.changed_tables:
        findings.append(Finding("no_change", "the workbook was not changed"))
    findings += _collateral(book, truth)
    outcome, right = _outcome(cells, truth)
    findings += outcome
    findings += _formulas(book, cells, truth)
    if truth.pivot is not None:
        findings += _pivot(book, cells, truth.pivot)
    findings += from_violations(check_rules(PROCESS_RULES, log))
    n = len(truth.targets)
    facts = {"targets": n, "correct": right, "changed": diff.as_json()}
    return verdict_of(findings, verifier="spreadsheet.state@1", facts=facts, score=right / n)
