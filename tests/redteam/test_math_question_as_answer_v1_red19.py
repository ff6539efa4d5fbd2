"""Attack: the question copied into the box, on a version-1 task id.

``test_math_question_as_answer_red19.py`` closed the copied question for the tasks that
declare a number form (``math.arith``, ``math.rationals`` and ``math.modular`` from version
2 on). Their version-1 tasks declare no form, and a version-1 id (issued before version 2,
kept in an eval set or a task list) still resolves to its task: there the copied question
was still paid, 120 of 120 arith and rationals tasks (reward 0.99, no form component to
lose). The defence: the environment tells the verifier that these families ask for a number
whatever their version (``envs.math.env.ASKS_NUMBER``), so a version-1 task is
``unevaluated`` too, its rewards otherwise as recorded (no form component)."""

from __future__ import annotations

import re

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.math.env import MathEnv

SEEDS = range(8)
FAMILIES = ("math.arith", "math.rationals", "math.modular")


@pytest.fixture(scope="module")
def env():
    e = SyncEnvironment(MathEnv())
    yield e
    e.close()


def _v1_tasks():
    for name in FAMILIES:
        family = MathEnv.tasks.families[name].at_version(1)
        for level in sorted(family.levels):
            for seed in SEEDS:
                yield family.task(level, seed)


def _question(prompt: str) -> str:
    m = re.search(r"\$(.*?)\$", prompt)
    assert m is not None, prompt
    q = m.group(1)
    if "\\bmod" in q:  # a^{e} \bmod m: the remainder as a computation
        a, e, m_ = re.fullmatch(r"(\d+)\^\{(\d+)\} \\bmod (\d+)", q).groups()  # type: ignore[union-attr]
        return f"{a}^{{{e}}} - {m_} \\left\\lfloor \\frac{{{a}^{{{e}}}}}{{{m_}}} \\right\\rfloor"
    return q


def test_the_question_copied_on_a_version_1_task_is_not_paid(env) -> None:
    paid, reasons, judged = [], set(), 0
    for task in _v1_tasks():
        assert "/v1/" in task.task_id
        if "\\pmod" in task.prompt:  # a congruence: no expression of the answer to copy
            continue
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=f"\\boxed{{{_question(task.prompt)}}}"))
        judged += 1
        if r.info["success"] or r.reward > 0:
            paid.append((task.task_id, r.reward))
        reasons.add(r.info["verdict"]["reason"])
    assert judged >= 40
    assert not paid, paid[:5]
    assert reasons <= {"unevaluated", "too_large"}, reasons  # a power's huge value: too_large


def test_a_version_1_oracle_is_still_paid_with_no_form_component(env) -> None:
    for task in _v1_tasks():
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=f"So \\boxed{{{task.truth['answer']}}}."))
        assert r.info["success"], task.task_id
        assert "form" not in r.reward_components, r.reward_components
