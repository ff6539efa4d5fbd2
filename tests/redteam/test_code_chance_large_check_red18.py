"""Attack on the chance level: a check of many asserts, and a constant answer.

Partial credit on HumanEval is measured above the best answer doing no work
(``verify/code/chance.py``), each stand-in's check under a budget of executed lines. The
budget counted the judge's own lines too: compiling the check (the assert rewrite, on the
first stand-in, uncached when it stopped) and deep-copying values for the stand-ins. A check
of 40 asserts on lists of twelve cost every stand-in its whole budget before it ran, so the
level was 0.0 and ``return 1``, right on 30 of the 40, earned 0.75 of partial credit
(HumanEval/69's 25 asserts already cost 175,000 of the 200,000 lines). Success would be
partial credit for the constant; the defence: only lines of the dataset's code count, and
the judge's own work is done before the budget starts.
"""

from __future__ import annotations

import random

from gymforge.verify.code import CodeJudge
from gymforge.verify.code.chance import chance


def _truth(asserts: int) -> dict:
    rnd = random.Random(1)
    lines = ["def check(candidate):"]
    for i in range(asserts):
        xs = [rnd.randint(1, 10) for _ in range(12)]
        lines.append(f"    assert candidate({xs}) == {1 if i % 4 else 2}")
    return {
        "kind": "humaneval",
        "entry_point": "lonely",
        "prompt": 'def lonely(xs):\n    """How many values occur once."""\n',
        "test": "\n".join(lines) + "\n",
    }


def test_the_level_of_a_long_check_counts_the_constant() -> None:
    assert chance(_truth(40)) >= 0.75
    assert chance(_truth(120)) >= 0.75


def test_a_constant_earns_nothing_on_a_long_check(code_judge: CodeJudge) -> None:
    v = code_judge.judge(_truth(40), "```python\ndef lonely(xs):\n    return 1\n```")
    assert v.facts["tests_passed"] == 30
    assert v.score == 0.0, v.facts
