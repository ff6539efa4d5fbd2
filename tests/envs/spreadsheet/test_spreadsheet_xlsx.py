"""The ``.xlsx`` round trip: a workbook exported at the end of an oracle episode, read back
with openpyxl, holds the world's constants and formula text, and the formula engine,
computing from the file alone (openpyxl computes nothing), gets the world's values."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import formulas
import numpy as np
import pytest
from openpyxl import load_workbook
from spreadsheet_helpers import KINDS, Driver, task_id

from gymforge.core.types import Reply
from gymforge.envs.spreadsheet.cells import decode, same_value
from gymforge.envs.spreadsheet.workbook import Book
from gymforge.envs.spreadsheet.xlsx import ZIP_TIME, export_workbook, read_workbook

Make = Callable[..., Driver]


def finish(d: Driver) -> None:
    """Walk the oracle's plan up to (not including) its final reply."""
    while True:
        action = d.loop.run_until_complete(d.env.oracle_action())
        if isinstance(action, Reply):
            return
        d.run([action])


def engine_values(path: Path) -> dict[str, object]:
    """Every cell value the engine computes from the file, keyed ``SHEET!A1`` (upper case)."""
    model = formulas.ExcelModel().loads(str(path)).finish()
    out: dict[str, object] = {}
    for key, value in model.calculate().items():
        ref = str(key).split("]", 1)[-1].replace("'", "")
        if ":" in ref or ref.startswith("!"):
            continue  # ranges and defined names
        raw = getattr(value, "value", value)
        out[ref.upper()] = np.asarray(raw, dtype=object).flat[0]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_export_round_trips_through_openpyxl_and_the_engine(
    driver: Make, kind: str, tmp_path: Path
) -> None:
    d = driver(task_id(kind, seed=3, rows=16))
    finish(d)
    book = Book(d.env.db)
    blob = export_workbook(book, d.env.db.now())
    path = tmp_path / "book.xlsx"
    path.write_bytes(blob)

    back = read_workbook(path.read_bytes())
    assert back.sheets == book.sheets()
    assert back.names == book.names()
    rows = book.db.all("SELECT * FROM cells")
    assert {r["id"] for r in rows} == set(back.cells)
    for r in rows:
        value, formula = back.cells[r["id"]]
        if r["formula"]:
            assert formula == r["formula"], r["id"]
        else:
            assert formula is None and same_value(value, decode(r)), r["id"]
            assert type(value) is type(decode(r)), r["id"]

    computed = engine_values(path)
    with_formulas = [r for r in rows if r["formula"]]
    if kind in ("compute", "fix"):
        assert len(with_formulas) >= 10
    for r in with_formulas:
        got = computed[r["id"].upper()]
        got = float(got) if isinstance(got, np.floating | np.integer) else got
        assert same_value(got, decode(r)), (r["id"], got, decode(r))  # type: ignore[arg-type]


def test_export_is_deterministic_and_reported_by_the_tool(driver: Make) -> None:
    d = driver(task_id("fix", rows=10))
    out = d.call("export_xlsx")["content"]
    blob = export_workbook(Book(d.env.db), d.env.db.now())
    assert out["sha256"] == hashlib.sha256(blob).hexdigest() and out["bytes"] == len(blob)
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        assert {i.date_time for i in z.infolist()} == {ZIP_TIME}
    wb = load_workbook(io.BytesIO(blob))
    stamp = d.env.db.now()[:19]
    assert wb.properties.modified.isoformat()[:19] == stamp
    assert wb.properties.created.isoformat()[:19] == stamp
