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

The version-1 tasks of these families (and of ``math.modular``) declare no form, and their
ids still resolve: there the copied question was still paid (120 of 120 arith and rationals
tasks, reward 0.99, no form component to lose) until the environment asked the verifier for
a number on every version of them (``envs.math.env.ASKS_NUMBER``, the ``number`` option).
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


def _tasks(families=FAMILIES, version=None):
    source = MathEnv.tasks
    for name in families:
        family = source.families[name]
        family = family if version is None else family.at_version(version)
        for level in sorted(family.levels):
            for seed in SEEDS:
                yield family.task(level, seed)


def _question(prompt: str) -> str:
    m = re.search(r"\$(.*?)\$", prompt)
    assert m is not None, prompt
    q = m.group(1)
    power = re.fullmatch(r"(\d+)\^\{(\d+)\} \\bmod (\d+)", q)
    if power is not None:  # a^{e} \bmod m: the remainder as a computation
        a, e, m_ = power.groups()
        return f"{a}^{{{e}}} - {m_} \\left\\lfloor \\frac{{{a}^{{{e}}}}}{{{m_}}} \\right\\rfloor"
    return q


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


def test_the_question_copied_on_a_version_1_task_is_not_paid(env) -> None:
    paid, reasons, judged = [], set(), 0
    for task in _tasks((*FAMILIES, "math.modular"), version=1):
        assert "/v1/" in task.task_id
        if "\\pmod" in task.prompt:  # a congruence: no expression of the answer to copy
            continue
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=f"\\boxed{{{_question(task.prompt)}}}"))
        judged += 1
        if r.info["success"] or r.reward > 0:
            paid.append((task.task_id, r.reward))
        reasons.add(r.info["verdict"]["reason"])
    assert judged >= 60
    assert not paid, paid[:5]
    assert reasons <= {"unevaluated", "too_large"}, reasons  # a power's huge value: too_large


def test_a_version_1_oracle_is_still_paid_with_no_form_component(env) -> None:
    for task in _tasks((*FAMILIES, "math.modular"), version=1):
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=f"So \\boxed{{{task.truth['answer']}}}."))
        assert r.info["success"] and "form" not in r.reward_components, task.task_id


@pytest.mark.parametrize(
    ("answer", "gold"),
    [("1 000", "1000"), ("-1 000", "-1000"), ("1 234 567", "1234567"), ("185 000", "185000")],
)
def test_thousands_set_off_by_spaces_are_a_number_written_out(answer: str, gold: str) -> None:
    """SI and French write ``1 000``: a number, not a computation (a false fail found after
    the defence, 5 of 585 honest episodes in that notation)."""
    v = MathVerifier().verify(f"\\boxed{{{answer}}}", gold, form="integer")
    assert v.passed, (answer, v.reason, v.facts)
    assert MathVerifier().verify("\\boxed{1 00}", "100", form="integer").reason == "unevaluated"
