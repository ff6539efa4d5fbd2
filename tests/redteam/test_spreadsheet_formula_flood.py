"""Formula cells by the thousand: ``set_formula`` over a 2,000-cell range with relative
references makes 2,000 distinct formula texts (each parsed and compiled, about 4 ms and
90 KB apiece, kept in the compile cache), and every later write recalculates every formula
cell of the workbook (about 1.5 ms each). A few such calls cost seconds per write and
hundreds of megabytes. Its success would let a policy slow every later step of its episode
and grow the process that serves other episodes. A fill is bounded per call and the
workbook's formula cells in all; past either bound the call is refused and nothing changes."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs" / "spreadsheet"))

from spreadsheet_helpers import Driver, task_id


def _formula_cells(d: Driver) -> int:
    return int(d.env.db.scalar("SELECT COUNT(*) FROM cells WHERE formula IS NOT NULL"))


def test_formula_cells_are_bounded_per_call_and_per_workbook() -> None:
    from gymforge.envs.spreadsheet.limits import MAX_FILL, MAX_FORMULA_CELLS

    d = Driver(task_id("compute", rows=10))
    try:
        big = d.call("set_formula", range="Orders!F1:G1000", formula="=A1", idempotency_key="k0")
        assert not big["ok"] and str(MAX_FILL) in big["error"]["message"], big
        cols = ["F", "G", "H", "I", "J", "K", "L", "M", "N"]
        refused = None
        for i, col in enumerate(cols):
            out = d.call(
                "set_formula",
                range=f"Orders!{col}1:{col}{MAX_FILL}",
                formula="=B1*2",
                idempotency_key=f"k{i + 1}",
            )
            if not out["ok"]:
                refused = out
                break
        assert refused is not None, "every fill was accepted"
        assert str(MAX_FORMULA_CELLS) in refused["error"]["message"], refused
        assert _formula_cells(d) <= MAX_FORMULA_CELLS
    finally:
        d.close()
