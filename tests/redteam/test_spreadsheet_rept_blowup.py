"""A formula that builds a huge string: ``=REPT(REPT("x",20000),20000)`` asks the engine for
a 400-million-character value (34 s and 3.1 GB in the environment process when found).
Its success would let one tool call stall or kill the process that serves every episode.
The engine must answer with an error value and a reason, before allocating, within a
counted work budget; the child runs under a memory limit so the machine is never at risk."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
before = peak_mb()
out = d.call("set_formula", range="Summary!B1", formula='=REPT(REPT("x",20000),20000)',
             idempotency_key="k1")
from gymforge.envs.spreadsheet.engine import trace
t = trace(d.env.book, '=REPT(REPT("x",20000),20000)', "Summary")
print(json.dumps({"ok": out["ok"], "content": out.get("content"), "grew_mb": peak_mb() - before,
                  "value": t.value, "reason": t.reason, "work": t.work}))
"""


def test_rept_of_rept_is_an_error_value_not_memory() -> None:
    from gymforge.envs.spreadsheet.limits import CELL_WORK, MAX_TEXT

    seen = run_child(ATTACK)
    assert seen["ok"], seen
    content = seen["content"]
    assert content["value"] == "#VALUE!", content
    assert "Summary!B1" in content["errors"] and str(MAX_TEXT) in content["errors"]["Summary!B1"]
    assert seen["value"] == "#VALUE!" and "REPT" in seen["reason"]
    assert 0 < seen["work"] <= CELL_WORK
    # the 400 MB string was never built
    assert seen["grew_mb"] < 64, seen
