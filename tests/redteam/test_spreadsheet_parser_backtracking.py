"""Catastrophic backtracking in the formula parser itself: the engine's tokenizer matches
``LAMBDA(``/``LET(`` with a regular expression of nested repetitions, so an unterminated
``=LAMBDA(aaaa...a"`` takes exponential time to refuse (24 letters: seconds; 40: hours).
The formula is parsed before any function allow-list can look at it. Its success would let
one ``set_formula`` stall the environment process. Such text must be refused before the
engine's parser sees it, by name; the check is counted work, not a clock."""

from __future__ import annotations

from sheet_child import run_child

ATTACK = """
d = Driver(task_id("compute", rows=10))
seen = {}
for i, f in enumerate(['=LAMBDA(' + 'a' * 40 + '"', '=1+_xlfn.LET(' + 'b' * 40 + '"',
                       '=SUM(Orders!B2:B3)+lambda (' + 'c' * 40 + '"']):
    out = d.call("set_formula", range="Summary!B1", formula=f, idempotency_key=f"k{i}")
    seen[f] = out.get("error") or out.get("content")
print(json.dumps(seen))
"""


def test_lambda_text_is_refused_before_the_parser_runs() -> None:
    seen = run_child(ATTACK, safety_timeout=60)
    for formula, got in seen.items():
        assert got.get("kind") == "validation", (formula, got)
        assert "LAMBDA" in got["message"] or "LET" in got["message"], (formula, got)
