"""A loop the formula text does not show: ``=LEN(MAKEARRAY(2000,2000,LAMBDA(r,c,r)))``
calls a lambda four million times (over a minute of CPU when found; ``MAP``, ``REDUCE``,
``SCAN``, ``BYROW`` and ``LET`` are the same family). Its success would let one tool call
stall the environment process. Functions whose work is set by numbers or by a lambda, not
by the cells they read, are refused where the formula is taken in, naming the function."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
seen = {}
for f in ["=LEN(MAKEARRAY(2000,2000,LAMBDA(r,c,r)))", "=REDUCE(0,Orders!B2:B11,LAMBDA(a,x,a+x))",
          "=LET(x,Orders!B2,x*2)", "=MUNIT(5000)", "=EXPAND(1,5000,5000)"]:
    out = d.call("set_formula", range="Summary!B1", formula=f, idempotency_key="k" + f)
    seen[f] = out.get("error") or out.get("content")
print(json.dumps(seen))
"""


def test_lambda_and_size_argument_functions_are_refused() -> None:
    seen = run_child(ATTACK, safety_timeout=60)
    for formula, got in seen.items():
        name = formula[1:].split("(")[1 if formula.startswith("=LEN") else 0]
        assert got.get("kind") == "validation", (formula, got)
        assert name in got["message"] or "LAMBDA" in got["message"], (formula, got)
