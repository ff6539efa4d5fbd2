"""Attack: hide a second value from the math judge in text LaTeX displays.

``\\textcolor{red}{text}`` typesets ``text`` in red; the math lexer read the colour and then
dropped the *text* as if it were a second colour argument. A response boxing
``3 \\textcolor{red}{\\text{ or } 4}`` shows a reader "3 or 4" while the judge graded a
bare 3: a hedge (several values in one answer fail as ``hedged``) that passed on either
gold, and more generally anything written in colour was invisible to the judge. Success
would mean reward for listing candidates. The defence: the coloured text is read as the
group it is (``\\textcolor{red}{3}`` is 3; ``3 \\textcolor{red}{\\text{ or } 4}`` fails).
"""

from __future__ import annotations

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.math.env import MathEnv
from gymforge.verify.math.equiv import is_equivalent

HEDGES = [
    r"{g} \textcolor{{red}}{{\text{{ or }} {w}}}",
    r"\textcolor{{red}}{{{w} \text{{ or }}}} {g}",
    r"\textcolor{{blue}}{{{w}}}{g}",
    r"{g}\textcolor{{white}}{{, {w}}}",
]


@pytest.mark.parametrize("template", HEDGES)
def test_coloured_second_value_is_seen(template: str) -> None:
    answer = template.format(g=3, w=4)
    out = is_equivalent(answer, "3")
    assert not out.equal, (answer, out)


def test_coloured_answer_is_still_read() -> None:
    assert is_equivalent(r"\textcolor{red}{3}", "3").equal
    assert is_equivalent(r"\color{red}{3}", "3").equal
    assert not is_equivalent(r"\textcolor{red}{4}", "3").equal


def test_episode_with_a_coloured_hedge_fails() -> None:
    env = SyncEnvironment(MathEnv())
    try:
        task = MathEnv.tasks.resolve("math.modular/v2/d1/s0")
        gold = task.truth["answer"]
        wrong = int(gold) + 1
        env.reset(task.task_id, 0)
        reply = f"\\boxed{{{gold} \\textcolor{{red}}{{\\text{{ or }} {wrong}}}}}"
        r = env.step(Reply(text=reply))
        assert not r.info["success"], r.info["verdict"]
        assert r.info["verdict"]["facts"]["reason"] in ("hedged", "parse_error"), r.info["verdict"]
    finally:
        env.close()
