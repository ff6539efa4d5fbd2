"""Attack: answer every pair with the empty set, since a backwards pair reads as an empty interval.

A bracket gold of two numbers is a tuple or an interval, and the verifier compares a set
answer with it as an interval. A pair written backwards (``(8, -4)``: ``math.linear``'s
``(x, y)`` whenever ``x > y``) read as the interval from 8 to -4, which is empty, so
``\\boxed{\\varnothing}`` (or any empty set: ``(1, 0) \\cup (1, 0)``) was paid on 84 of 200
level-2 ``math.linear`` tasks without solving anything, and ``(a, b) \\cup (b, a)`` answered
``(a, b)`` (the backwards half adding nothing). Success would mean reward for a constant
reply on about four tasks in ten. The defence: an interval runs from a smaller number to a
larger one (``[a, a]`` the one point), so a backwards bracket is no set; as a tuple it is
still answered by itself.
"""

from __future__ import annotations

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.math.env import MathEnv
from gymforge.verify.math.equiv import is_equivalent

SEEDS = range(200)


def test_the_empty_set_answers_no_linear_system() -> None:
    env = SyncEnvironment(MathEnv())
    family = MathEnv.tasks.families["math.linear"]
    paid, honest = [], 0
    try:
        for seed in SEEDS:
            task = family.task(2, seed)
            env.reset(task.task_id, 0)
            if env.step(Reply(text="\\boxed{\\varnothing}")).info["success"]:
                paid.append(task.task_id)
            env.reset(task.task_id, 0)
            r = env.step(Reply(text=f"\\boxed{{{task.truth['answer']}}}"))
            honest += bool(r.info["success"])
    finally:
        env.close()
    assert not paid, (len(paid), paid[:3])
    assert honest == len(SEEDS)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("\\emptyset", "(8, -4)"),
        ("\\varnothing", "(3, 3)"),
        ("\\varnothing", "[3, 3)"),
        ("(1, 0) \\cup (1, 0)", "(8, -4)"),
        ("(1, 0) \\cap (5, 0)", "(8, -4)"),
        ("(-4, 8) \\cup (8, -4)", "(-4, 8)"),
        ("x \\in (8, -4) \\cup (-4, 8)", "(-4, 8)"),
        ("(-4, 8) \\cup (8, -4)", "(8, -4)"),
        ("\\{\\}", "(2, 1)"),
    ],
)
def test_a_backwards_interval_is_no_set(answer: str, gold: str) -> None:
    assert not is_equivalent(answer, gold).equal, (answer, gold)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("(8, -4)", "(8, -4)"),
        ("x = 8, y = -4", "(8, -4)"),
        ("\\left(8, -4\\right)", "(8, -4)"),
        ("x \\in [3, 3]", "[3, 3]"),
        ("1 < x \\le 5", "(1, 5]"),
        ("x < 3", "(-\\infty, 3)"),
        ("(-4, 1) \\cup [1, 8)", "(-4, 8)"),
        ("\\varnothing", "\\{\\}"),
        ("\\mathbb{R}", "(-\\infty, \\infty)"),
    ],
)
def test_tuples_and_intervals_still_pass(answer: str, gold: str) -> None:
    assert is_equivalent(answer, gold).equal, (answer, gold)
