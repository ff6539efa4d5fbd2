"""Big-integer arithmetic in the engine: ``=FACT(10^6)`` computes a 5.5-million-digit
integer before it gives ``#VALUE!`` (seconds of CPU per call when found; a range of such
cells multiplies it). Its success would let a cheap formula stall the environment process.
Excel's own bound applies before any work: ``FACT`` of more than 170 is ``#NUM!``."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
from gymforge.envs.spreadsheet.engine import trace
out = {}
for f in ["=FACT(10^6)", "=FACT(171)", "=FACTDOUBLE(10^6)", "=FACT(5)"]:
    t = trace(d.env.book, f, "Summary")
    out[f] = {"value": t.value, "reason": t.reason, "work": t.work}
print(json.dumps(out))
"""


def test_factorial_beyond_excel_bound_is_num_before_work() -> None:
    seen = run_child(ATTACK, safety_timeout=60)
    for f in ("=FACT(10^6)", "=FACT(171)", "=FACTDOUBLE(10^6)"):
        assert seen[f]["value"] == "#NUM!", (f, seen[f])
        assert "170" in seen[f]["reason"] or "300" in seen[f]["reason"], (f, seen[f])
    assert seen["=FACT(5)"] == {"value": 120, "reason": None, "work": seen["=FACT(5)"]["work"]}
