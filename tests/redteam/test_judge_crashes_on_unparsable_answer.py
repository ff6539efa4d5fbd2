"""Attack: make the judge itself raise, so the answer becomes a verifier error.

Before the candidate runs, the judge parses a HumanEval answer to see whether it defines the
entry point. An answer whose code nests 3,000 unary minuses (``x = ----...-1``, 3 KB) makes
Python's parser raise ``RecursionError`` (``MemoryError`` for some shapes), not
``SyntaxError``. An exception out of the judge is a verifier error: the episode is never
scored. Success of this attack would mean any wrong answer, with that line appended, dodges
its failure. The defence: whatever the answer's text does to the judge's parser, the answer
is judged (it does not load in the sandbox either, so it fails).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

TASK = {
    "kind": "humaneval",
    "entry_point": "add",
    "prompt": 'def add(a: int, b: int) -> int:\n    """The sum of a and b."""\n',
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    "    assert candidate(5, 7) == 12\n",
}
BOMBS = {
    "unary": "x = " + "-" * 3000 + "1\n",
    "attributes": "x = a" + ".b" * 3000 + "\n",
    "sum": "x = " + "a+" * 3000 + "a\n",
    "not": "x = " + "not " * 3000 + "a\n",
}


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


@pytest.mark.parametrize("shape", sorted(BOMBS))
def test_a_parser_bomb_is_a_failed_answer_not_a_judge_error(judge: CodeJudge, shape: str) -> None:
    wrong = "def add(a, b):\n    return a - b\n" + BOMBS[shape]
    v = judge.judge(TASK, wrong)
    assert not v.passed and v.reason != "unjudgeable", v
    assert v.facts.get("trainable", True) is True, v
    assert v.facts["tests_passed"] == 0, v
    completion = "    return a - b\n" + BOMBS[shape]  # the completion form too
    v = judge.judge(TASK, completion)
    assert not v.passed and v.facts["tests_passed"] == 0, v


def test_the_same_answer_without_the_bomb_is_judged_as_usual(judge: CodeJudge) -> None:
    assert judge.judge(TASK, "def add(a, b):\n    return a + b\n").passed
    v = judge.judge(TASK, "def add(a, b):\n    return a - b\n")
    assert not v.passed and v.reason == "wrong_answer", v
