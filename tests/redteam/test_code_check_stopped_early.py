"""Attack: stop a HumanEval check after the tests you pass, before the ones you would fail.

HumanEval/32's check calls the candidate outside its assert, in a loop of 100
(``solution = candidate(coeffs)``, then ``assert fabs(poly(coeffs, solution)) < 1e-4``). An
error outside an assert ended the check and counted as one failure, so an answer that knows
when it is wrong (it can evaluate ``poly`` itself) raised at its first miss instead of
answering: right on the first call, it was paid half the tests (``tests_passed`` 0.25) where
answering the rest wrong earns a tenth of that. Success would be any score for the stopped
check above what the same answer gets by answering wrong: a check the answer stops pays no
partial credit, since the tests it never reached are unknown.
"""

from __future__ import annotations

from gymforge.verify.code import CodeJudge

TRUTH = {  # HumanEval/32's shape, 20 rounds
    "kind": "humaneval",
    "entry_point": "find_zero",
    "prompt": (
        "def poly(xs, x):\n    return sum(c * x**i for i, c in enumerate(xs))\n\n\n"
        'def find_zero(xs):\n    """A zero of poly(xs, x)."""\n'
    ),
    "test": (
        "def check(candidate):\n"
        "    for k in range(1, 21):\n"
        "        coeffs = [-k, 1]\n"
        "        solution = candidate(list(coeffs))\n"
        "        assert abs(poly(coeffs, solution)) < 1e-4\n"
    ),
}
STOPS = (  # right once, then stops the check
    "```python\ndef find_zero(xs):\n    if xs == [-1, 1]:\n        return 1.0\n"
    "    raise ValueError('unsure')\n```"
)
WRONG = (  # right once, then answers wrong
    "```python\ndef find_zero(xs):\n    if xs == [-1, 1]:\n        return 1.0\n    return 0.0\n```"
)
RIGHT = "```python\ndef find_zero(xs):\n    return -xs[0] / xs[1]\n```"


def test_stopping_the_check_pays_no_more_than_answering_wrong(code_judge: CodeJudge) -> None:
    wrong = code_judge.judge(TRUTH, WRONG)
    assert wrong.facts["tests_passed"] == 1 and wrong.facts["tests_run"] == 20, wrong.facts
    stopped = code_judge.judge(TRUTH, STOPS)
    assert not stopped.passed
    assert (stopped.score or 0.0) <= (wrong.score or 0.0), stopped.facts
    assert stopped.score == 0.0


def test_the_right_answer_still_passes(code_judge: CodeJudge) -> None:
    v = code_judge.judge(TRUTH, RIGHT)
    assert v.passed and v.facts["tests_run"] == 20, v.facts
