"""Compile work by fill-down: a long formula with one relative reference
(``=A1+1+1+...+1``, about 1,000 characters) filled down a column is a distinct text in every
cell, and the engine parses and compiles each one (about 0.2 s apiece: 20 cells took 4 s of
CPU when found, a full column would take minutes). Its success would let one call stall the
environment process. The formula text a fill makes the engine compile is bounded per call, and
a workbook's formula text in all; past a bound the call is refused before anything is
compiled or written."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
from gymforge.envs.spreadsheet import engine
d = Driver(task_id("compute", rows=10))
f = "=A1+" + "+".join(["1"] * 480)
seen = {}
for rows in (25, 1000):
    misses = engine.CACHE.misses
    out = d.call("set_formula", range=f"Orders!F1:F{rows}", formula=f, idempotency_key=f"k{rows}")
    seen[rows] = {"out": out.get("error") or out.get("content"),
                  "compiled": engine.CACHE.misses - misses}
print(json.dumps(seen))
"""


def test_fill_compile_work_is_bounded() -> None:
    from gymforge.envs.spreadsheet.limits import MAX_BOOK_TEXT, MAX_FILL_TEXT

    seen = run_child(ATTACK, safety_timeout=60)
    for rows, bound in (("25", MAX_FILL_TEXT), ("1000", MAX_BOOK_TEXT)):
        got = seen[rows]
        assert got["out"].get("kind") == "validation", (rows, got)
        assert str(bound) in got["out"]["message"], (rows, got)
        assert got["compiled"] <= 1, (rows, got)  # refused before the fill was compiled
