"""Catastrophic backtracking through a criteria wildcard: a 3,000-character cell and
``=COUNTIF(Summary!B2,"*a*a*a*b")``, which the engine turns into the regular expression
``.*a.*a.*a.*b`` (cubic work on a non-match; over a minute of CPU when found). Its
success would let one tool call stall the environment process. The engine must price the
match before running it and answer with an error value and a reason within its work budget."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
d.call("write_range", range="Summary!B2", values=[["a" * 3000]], idempotency_key="k0")
f = '=COUNTIF(Summary!B2,"*a*a*a*b")'
out = d.call("set_formula", range="Summary!B3", formula=f, idempotency_key="k1")
from gymforge.envs.spreadsheet.engine import trace
t = trace(d.env.book, f, "Summary")
print(json.dumps({"content": out.get("content"), "value": t.value, "reason": t.reason,
                  "work": t.work}))
"""


def test_wildcard_backtracking_is_priced_and_refused() -> None:
    from gymforge.envs.spreadsheet.limits import CELL_WORK

    seen = run_child(ATTACK, safety_timeout=60)
    assert seen["content"]["value"] == "#VALUE!", seen
    assert "wildcard" in seen["content"]["errors"]["Summary!B3"], seen
    assert seen["value"] == "#VALUE!" and "wildcard" in seen["reason"]
    assert 0 < seen["work"] <= CELL_WORK
