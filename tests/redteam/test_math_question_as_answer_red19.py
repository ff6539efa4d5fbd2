"""Attack: box the question's own expression and let the verifier do the arithmetic.

``math.arith`` asks for the exact value of an arithmetic chain and ``math.rationals`` to
simplify a rational expression, each "as a reduced fraction or integer". The verifier reads
an answer as mathematics and compares values, so the prompt's expression copied into
``\\boxed{}`` equalled the gold: every task passed (``success``, ``task`` 1.0; only the form
component took 0.5 off) without one step of the computation the task asks for. Success would
mean reward for solving nothing. The defence: when a task demands an integer or a reduced
fraction, the answer must be a number written out (a numeral, a decimal, one fraction of two
numerals, a mixed number), else it fails as ``unevaluated``; a number in another notation
than the one asked (``\\frac{6}{8}``, ``0.75``) still passes with ``form_ok: false``.
"""

from __future__ import annotations

import re

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.math.env import MathEnv
from gymforge.verify.math import MathVerifier

SEEDS = range(12)
FAMILIES = ("math.arith", "math.rationals")


@pytest.fixture(scope="module")
def env():
    e = SyncEnvironment(MathEnv())
    yield e
    e.close()


def _tasks():
    source = MathEnv.tasks
    for name in FAMILIES:
        family = source.families[name]
        for level in sorted(family.levels):
            for seed in SEEDS:
                yield family.task(level, seed)


def _question(prompt: str) -> str:
    m = re.search(r"\$(.*?)\$", prompt)
    assert m is not None, prompt
    return m.group(1)


def test_the_question_copied_into_the_box_is_not_paid(env) -> None:
    paid = []
    for task in _tasks():
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=f"\\boxed{{{_question(task.prompt)}}}"))
        if r.info["success"] or r.reward > 0:
            paid.append((task.task_id, r.reward))
        else:
            assert r.info["verdict"]["reason"] == "unevaluated", r.info["verdict"]
    assert not paid, paid[:5]


def test_the_oracle_is_still_paid(env) -> None:
    for task in _tasks():
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=f"So \\boxed{{{task.truth['answer']}}}."))
        assert r.info["success"] and r.reward_components["form"] == 0.0, task.task_id


@pytest.mark.parametrize(
    ("answer", "gold", "form_ok"),
    [
        ("\\frac{6}{8}", "\\frac{3}{4}", False),  # a number, not in the asked form
        ("0.75", "\\frac{3}{4}", False),
        ("3/4", "\\frac{3}{4}", True),
        ("-\\frac{3}{4}", "-\\frac{3}{4}", True),
        ("\\frac{-3}{4}", "-\\frac{3}{4}", True),
        ("x = \\frac{3}{4}", "\\frac{3}{4}", True),
        ("1\\frac{1}{2}", "\\frac{3}{2}", False),
        ("0.\\overline{3}", "\\frac{1}{3}", False),
        ("12.0", "12", False),
        ("1{,}000", "1000", True),
        ("1.2 \\times 10^{3}", "1200", False),
        ("5 \\text{ ways}", "5", True),
    ],
)
def test_numbers_in_any_notation_still_pass(answer: str, gold: str, form_ok: bool) -> None:
    v = MathVerifier().verify(f"\\boxed{{{answer}}}", gold, form="reduced_fraction")
    assert v.passed and v.facts["form_ok"] is form_ok, (answer, v.facts)


@pytest.mark.parametrize(
    "answer",
    ["1 + 2", "(1 + 2)", "3 \\times 1", "\\frac{9 - 3}{2}", "2^2 - 1", "--3",
     "\\lfloor 3.5 \\rfloor", "3 \\cdot 1 \\text{ ways}", "x = 1 + 2", "\\frac{\\frac{3}{1}}{1}"],
)  # fmt: skip
def test_computations_fail_when_a_number_is_asked(answer: str) -> None:
    for form in ("integer", "reduced_fraction"):
        v = MathVerifier().verify(f"\\boxed{{{answer}}}", "3", form=form)
        assert not v.passed and v.reason == "unevaluated", (answer, form, v.facts)
    assert MathVerifier().verify(f"\\boxed{{{answer}}}", "3").passed  # no form: a value


def test_a_modular_power_left_to_the_floor_function_is_not_paid() -> None:
    """``a^e - m \\lfloor a^e / m \\rfloor`` is ``a^e mod m`` computed by the verifier."""
    v = MathVerifier().verify("\\boxed{7^{5} - 11\\lfloor 7^{5}/11 \\rfloor}", "10", form="integer")
    assert not v.passed and v.reason == "unevaluated", v.facts
