"""Compile work by fill-down: a long formula with one relative reference
(``=A1+1+1+...+1``, about 1,000 characters) filled down a column is a distinct text in every
cell, and the engine parses and compiles each one (about 0.2 s apiece: 20 cells took 4 s of
CPU when found, a full column would take minutes). Its success would let one call stall the
environment process. The formula text a fill makes the engine compile is bounded per call;
past the bound the call is refused before anything is compiled or written."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
from gymforge.envs.spreadsheet import engine
d = Driver(task_id("compute", rows=10))
f = "=A1+" + "+".join(["1"] * 480)
misses = engine.compile_formula.cache_info().misses
out = d.call("set_formula", range="Orders!F1:F1000", formula=f, idempotency_key="k0")
compiled = engine.compile_formula.cache_info().misses - misses
print(json.dumps({"out": out.get("error") or out.get("content"), "compiled": compiled}))
"""


def test_fill_compile_work_is_bounded() -> None:
    from gymforge.envs.spreadsheet.limits import MAX_FILL_TEXT

    seen = run_child(ATTACK, safety_timeout=60)
    assert seen["out"].get("kind") == "validation", seen
    assert str(MAX_FILL_TEXT) in seen["out"]["message"], seen
    assert seen["compiled"] <= 1, seen  # refused before the fill was compiled
