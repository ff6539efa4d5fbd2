"""Attack: the candidate searches its own process for the judge's tests.

Success of this attack would mean: a candidate for a task whose test passes it a lambda
finds the compiled test (code objects, their constants, frames) somewhere in its own
process, and answers with the expected value the test holds, without calling the function
it was given. Whatever the arguments, the test code and its expected values must never be
in the candidate's process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

TASK = {
    "kind": "mbpp",
    "test_list": [
        "assert apply_all(lambda x: x * 3 + 1, [1, 2, 5]) == [4, 7, 16]",
        "assert apply_all(lambda x: x - 7, [10, 20]) == [3, 13]",
    ],
}

# Never calls f: walks every object in its process for code whose constants hold its
# input, and returns the constant that follows it (the expected value).
PEEKER = r"""
import gc, sys, types

def _codes():
    for o in gc.get_objects():
        if isinstance(o, types.FunctionType):
            yield o.__code__
        elif isinstance(o, types.CodeType):
            yield o
    f = sys._getframe()
    while f is not None:
        yield f.f_code
        f = f.f_back

def _consts(code, seen):
    if id(code) in seen:
        return
    seen.add(id(code))
    yield code.co_consts
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _consts(c, seen)

def apply_all(f, xs):
    seen = set()
    for code in _codes():
        for consts in _consts(code, seen):
            tuples = [c for c in consts if isinstance(c, tuple)]
            for a, b in zip(tuples, tuples[1:]):
                if list(a) == xs:
                    return list(b)
    return None
"""


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_peeking_at_the_candidates_own_process_finds_no_test(judge: CodeJudge) -> None:
    v = judge.judge(TASK, PEEKER)
    assert not v.passed, v
    assert v.facts["tests_passed"] == 0, v
    honest = "def apply_all(f, xs):\n    return [f(x) for x in xs]\n"
    assert judge.judge(TASK, honest).passed
