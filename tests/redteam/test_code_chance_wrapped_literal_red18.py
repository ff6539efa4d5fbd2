"""Attack on the chance level: constants the asserts compare through a conversion, and one
step on the second argument.

The level partial credit is measured above includes a constant for every literal an assert
compares with, but only a literal that is a side of the comparison: HumanEval/37 compares
``tuple(candidate(x))`` with ``tuple([...])``, whose literal is no side, so the prompt's
table and the last test's ``[-12, 8, ...]`` passed two of /37's three and earned 0.5 above a
level of 0.33. One builtin step was taken on the first argument only: ``sorted(l2)`` behind
the table passes every test of HumanEval/58 (a full pass, the dataset's) and most of a check
like it. Success would be partial credit
for either; the defence: literals inside a conversion (``tuple``, ``list``, ``sorted``...)
on a side are constants too, and the steps are taken on the second argument as well.
"""

from __future__ import annotations

from gymforge.verify.code import CodeJudge

TRUTH_37 = {  # HumanEval/37 as published (its prompt shortened to the examples)
    "kind": "humaneval",
    "entry_point": "sort_even",
    "prompt": (
        "def sort_even(l: list):\n"
        '    """Sort the values at even indices.\n'
        "    >>> sort_even([1, 2, 3])\n    [1, 2, 3]\n"
        "    >>> sort_even([5, 6, 3, 4])\n    [3, 6, 5, 4]\n"
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        "    assert tuple(candidate([1, 2, 3])) == tuple([1, 2, 3])\n"
        "    assert tuple(candidate([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10])) == "
        "tuple([-10, 3, -5, 2, -3, 3, 5, 0, 9, 1, 123])\n"
        "    assert tuple(candidate([5, 8, -12, 4, 23, 2, 3, 11, 12, -10])) == "
        "tuple([-12, 8, 3, 4, 5, 2, 12, 11, 23, -10])\n"
    ),
}
TRUTH_COMMON = {  # HumanEval/58's shape, one more test
    "kind": "humaneval",
    "entry_point": "common",
    "prompt": (
        "def common(l1: list, l2: list):\n"
        '    """Return sorted unique common elements for two lists.\n'
        "    >>> common([1, 4, 3, 34, 653, 2, 5], [5, 7, 1, 5, 9, 653, 121])\n    [1, 5, 653]\n"
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        "    assert candidate([1, 4, 3, 34, 653, 2, 5], [5, 7, 1, 5, 9, 653, 121]) == [1, 5, 653]\n"
        "    assert candidate([5, 3, 2, 8], [3, 2]) == [2, 3]\n"
        "    assert candidate([4, 3, 2, 8], [3, 2, 4]) == [2, 3, 4]\n"
        "    assert candidate([4, 3, 2, 8], []) == []\n"
        "    assert candidate([4, 3, 2, 8], [9, 3]) == [3]\n"
    ),
}


def _code(body: str) -> str:
    return f"```python\n{body}\n```"


def test_a_constant_compared_through_tuple_earns_nothing(code_judge: CodeJudge) -> None:
    answer = _code(
        "def sort_even(l):\n"
        "    if l == [1, 2, 3]:\n"
        "        return [1, 2, 3]\n"
        "    return [-12, 8, 3, 4, 5, 2, 12, 11, 23, -10]"
    )
    v = code_judge.judge(TRUTH_37, answer)
    assert v.facts["tests_passed"] == 2
    assert not v.passed
    assert v.score == 0.0, v.facts


def test_a_step_on_the_second_argument_earns_nothing(code_judge: CodeJudge) -> None:
    answer = _code(
        "def common(l1, l2):\n"
        "    if l1 == [1, 4, 3, 34, 653, 2, 5]:\n"
        "        return [1, 5, 653]\n"
        "    return sorted(l2)"
    )
    v = code_judge.judge(TRUTH_COMMON, answer)
    assert v.facts["tests_passed"] == 4
    assert v.score == 0.0, v.facts
    right = _code("def common(l1, l2):\n    return sorted(set(l1) & set(l2))")
    assert code_judge.judge(TRUTH_COMMON, right).score == 1.0
