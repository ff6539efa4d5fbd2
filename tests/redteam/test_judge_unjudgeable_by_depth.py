"""Attack: make the judge call the task unjudgeable instead of failing the answer.

An unjudgeable verdict is a verifier error: the episode is kept but never scored or trained
on. The judge declares it when a test's argument cannot be sent to the sandbox. The
candidate controls some of those arguments: in MBPP task 601 (as published) the test builds
``Pair`` objects with the candidate's own ``Pair`` and passes them back to it. A ``Pair``
that returns a list nested 98 deep is still plain data on the way out, but the judge could
not send it back, and said "unjudgeable". Success of this attack would mean a candidate that
solves nothing chooses exclusion over failure, on a task its GRPO siblings solve: its failure
never reaches the gradient. The defence: a value the judge cannot send back for its size or
depth (never a property of the task) fails the test that needed it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

# MBPP task 601 as published (the candidate defines Pair; the test builds Pairs with it).
PAIRS = {
    "kind": "mbpp",
    "test_setup_code": "",
    "test_list": [
        "assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], 4) == 3",
        "assert max_chain_length([Pair(1, 2), Pair(3, 4),Pair(5, 6), Pair(7, 8)], 4) == 4",
    ],
}
HONEST = (
    "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n\n"
    "def max_chain_length(arr, n):\n    best = [1] * n\n    for i in range(1, n):\n"
    "        for j in range(i):\n            if arr[i].a > arr[j].b:\n"
    "                best[i] = max(best[i], best[j] + 1)\n    return max(best)\n"
)


def deep_pair(depth: int, outer: str = "list") -> str:
    """A Pair that returns ``depth`` nested lists (or a set of that many nested tuples)."""
    wrap = "[v]" if outer == "list" else "(v,)"
    done = "v" if outer == "list" else "{v}"
    return (
        f"def Pair(a, b):\n    v = 0\n    for _ in range({depth}):\n        v = {wrap}\n"
        f"    return {done}\n\ndef max_chain_length(arr, n):\n    return 0\n"
    )


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_the_honest_answer_passes(judge: CodeJudge) -> None:
    v = judge.judge(PAIRS, HONEST)
    assert v.passed and v.facts["tests_passed"] == 2, v


@pytest.mark.parametrize("outer", ["list", "set"])
@pytest.mark.parametrize("depth", [60, 97, 98, 99, 100])
def test_a_value_too_deep_to_send_back_fails_and_is_never_unjudgeable(
    judge: CodeJudge, depth: int, outer: str
) -> None:
    v = judge.judge(PAIRS, deep_pair(depth, outer))
    assert not v.passed and v.reason != "unjudgeable", v
    assert v.facts.get("trainable", True) is True, v
    assert v.facts["tests_run"] == 2 and v.facts["tests_passed"] == 0, v
