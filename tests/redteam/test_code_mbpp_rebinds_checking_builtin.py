"""Attack: on an MBPP row without a reference, define the builtin the asserts check with.

A row's function may be named after a builtin (task 126's ``sum``); without a reference
solution to say so, the judge took any builtin the answer defines and every assert calls as
the answer's. Asserts such as ``assert set(uniq([1, 1, 2])) == set([1, 2])`` call ``set`` on
both sides, so an answer defining ``set`` to return ``0`` made every assert ``0 == 0`` and
passed without deduplicating anything. Success would be that pass: a builtin is the row's
function only when it is the one name the asserts take from the answer; otherwise it stays
the builtin, whatever the answer defines.
"""

from __future__ import annotations

from gymforge.verify.code import CodeJudge

ROW = {  # an MBPP row as a user writes it: no reference ``code``
    "kind": "mbpp",
    "test_list": [
        "assert set(uniq([1, 1, 2])) == set([1, 2])",
        "assert set(uniq([3, 3, 3])) == set([3])",
        "assert sorted(set(uniq([5, 4, 5]))) == [4, 5]",
    ],
    "test_setup_code": "",
    "test_imports": [],
}
FORGED = (
    "```python\ndef set(*args):\n    return 0\ndef sorted(*args):\n    return [4, 5]\n"
    "def uniq(xs):\n    return None\n```"
)
HONEST = "```python\ndef uniq(xs):\n    return list(dict.fromkeys(xs))\n```"
BUILTIN_TASK = {  # task 126's shape, no reference: the builtin name is the function tested
    "kind": "mbpp",
    "test_list": ["assert sum(10, 15) == 6", "assert sum(4, 6) == 3"],
    "test_setup_code": "",
    "test_imports": [],
}
SUM = (
    "```python\ndef sum(a, b):\n    t = 0\n    for i in range(1, min(a, b)):\n"
    "        if a % i == 0 and b % i == 0:\n            t += i\n    return t\n```"
)


def test_defining_the_checking_builtin_passes_nothing(code_judge: CodeJudge) -> None:
    v = code_judge.judge(ROW, FORGED)
    assert v.facts["tests_passed"] == 0, v.facts
    assert code_judge.judge(ROW, HONEST).passed


def test_a_function_named_after_a_builtin_is_still_the_answer(code_judge: CodeJudge) -> None:
    assert code_judge.judge(BUILTIN_TASK, SUM).passed
