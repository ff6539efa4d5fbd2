"""Attack: the candidate redefines the helpers the task's test relies on.

HumanEval prompts define helpers the test calls (``poly``, ``encode_cyclic``, ...), and MBPP
set-up code can define checking functions. Since the task's module also runs in the
sandbox before the candidate, a candidate can redefine those names there. Success of this
attack would mean: the test's calls of a helper reach the candidate's redefinition (say, an
``encode`` that does nothing, next to a ``decode`` that does nothing), so a candidate that
solves nothing passes. The test must use the task's own helpers, run by the judge.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

HUMANEVAL = {
    "kind": "humaneval",
    "entry_point": "decode",
    "prompt": "def encode(s: str) -> str:\n    return s[1:] + s[:1]\n\n\n"
    'def decode(s: str) -> str:\n    """Undo encode."""\n',
    "test": "def check(candidate):\n"
    "    for s in ['abc', 'hello', 'xy', 'q']:\n        assert candidate(encode(s)) == s\n",
}
MBPP = {
    "kind": "mbpp",
    "test_setup_code": "def is_sorted(xs):\n    return all(a <= b for a, b in zip(xs, xs[1:]))",
    "test_list": ["assert is_sorted(sort_it([3, 1, 2]))", "assert is_sorted(sort_it([9, 8]))"],
}


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_redefining_the_prompts_helper_does_not_pass(judge: CodeJudge) -> None:
    honest = "    return s[-1:] + s[:-1]\n"  # a completion of the prompt
    assert judge.judge(HUMANEVAL, honest).passed
    attack = "def encode(s):\n    return s\n\ndef decode(s):\n    return s\n"
    v = judge.judge(HUMANEVAL, attack)
    assert not v.passed and v.facts["tests_passed"] == 1, v  # only 'q' survives a rotation


def test_redefining_the_set_up_codes_checker_does_not_pass(judge: CodeJudge) -> None:
    assert judge.judge(MBPP, "def sort_it(xs):\n    return sorted(xs)\n").passed
    attack = "def is_sorted(xs):\n    return True\n\ndef sort_it(xs):\n    return xs\n"
    v = judge.judge(MBPP, attack)
    assert not v.passed and v.facts["tests_passed"] == 0, v
