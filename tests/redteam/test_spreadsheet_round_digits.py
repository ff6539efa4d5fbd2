"""Big-integer arithmetic through a digits argument: the engine's ``ROUND(x, d)`` computes
``10 ** int(d)`` in Python integers, so ``=ROUND(1,10^9)`` builds a billion-digit number
(it ran for over ten minutes when found; ``ROUNDUP``, ``ROUNDDOWN`` and ``TRUNC`` share
the code). Its
success would let one cheap formula stall the environment process. Digits beyond what a
double can hold (|d| > 308) are ``#NUM!`` with a reason, before any work."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
from gymforge.envs.spreadsheet.engine import trace
out = {}
for f in ["=ROUND(1,10^9)", "=ROUNDUP(Orders!C2,-10^9)", "=ROUNDDOWN(1,400)", "=TRUNC(1,10^9)",
          "=ROUND(2.5,0)"]:
    t = trace(d.env.book, f, "Summary")
    out[f] = {"value": t.value, "reason": t.reason}
print(json.dumps(out))
"""


def test_round_digits_beyond_a_double_are_num() -> None:
    seen = run_child(ATTACK, safety_timeout=60)
    for f in ("=ROUND(1,10^9)", "=ROUNDUP(Orders!C2,-10^9)", "=ROUNDDOWN(1,400)", "=TRUNC(1,10^9)"):
        assert seen[f]["value"] == "#NUM!", (f, seen[f])
        assert "308" in seen[f]["reason"], (f, seen[f])
    assert seen["=ROUND(2.5,0)"] == {"value": 3, "reason": None}
