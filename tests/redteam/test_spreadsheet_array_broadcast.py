"""A huge array made from small inputs: ``=ROWS(Orders!A1:A1000*TRANSPOSE(Orders!A1:A1000))``
broadcasts two 1,000-cell vectors into a million-element array, and ``&`` between two such
vectors of long text builds gigabytes. Its success would let one formula cost the
environment process memory and time far beyond the cells it reads. The engine must bound
the broadcast size before the operator runs: an error value with a reason."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
out = {}
for i, f in enumerate(["=ROWS(Orders!A1:A1000*TRANSPOSE(Orders!A1:A1000))",
                       '=LEN(REPT("x",30000)&Orders!A1:A1000&TRANSPOSE(Orders!A1:A1000))']):
    before = peak_mb()
    r = d.call("set_formula", range="Summary!B1", formula=f, idempotency_key=f"k{i}")
    out[f] = {"content": r.get("content"), "grew_mb": peak_mb() - before}
from gymforge.envs.spreadsheet.engine import trace
t = trace(d.env.book, "=ROWS(Orders!A1:A1000*TRANSPOSE(Orders!A1:A1000))", "Summary")
print(json.dumps({"calls": out, "reason": t.reason, "work": t.work}))
"""


def test_broadcast_blowup_is_an_error_value() -> None:
    from gymforge.envs.spreadsheet.limits import CELL_WORK, MAX_ELEMENTS

    seen = run_child(ATTACK)
    for formula, got in seen["calls"].items():
        assert got["content"]["value"] == "#VALUE!", (formula, got)
        assert str(MAX_ELEMENTS) in got["content"]["errors"]["Summary!B1"], (formula, got)
        assert got["grew_mb"] < 64, (formula, got)
    assert seen["reason"] and 0 < seen["work"] <= CELL_WORK
