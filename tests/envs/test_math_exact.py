"""``math.arith`` and ``math.rationals`` compute on reduced int pairs (``exact``) and draw
through ``tasks.draws``: the same tasks as their ``Fraction`` builds, kept here as the
references, and each operation the same value as ``Fraction``'s."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.seeding import derive_seed
from gymforge.envs.math import arith, exact, rationals
from gymforge.envs.math.latex import fraction_tex, rational, with_form
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import TaskFamily
from gymforge.tasks.truth_dump import dump_truth

OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}


def arith_reference(
    family: TaskFamily[MathTruth], params: dict[str, Any], r: random.Random
) -> tuple[str, MathTruth]:
    """``ArithFamily.build`` as it was, in Fractions."""
    ops = ["+", "-", "*"] + (["/"] if params["division"] else [])
    value = Fraction(r.randint(1, params["magnitude"]))
    text = str(value)
    for _ in range(params["terms"] - 1):
        op, operand = r.choice(ops), r.randint(1, params["magnitude"])
        left = r.random() < 0.5
        if op == "/" and not left and value == 0:
            op = "+"
        if left:
            value, text = OPS[op](value, Fraction(operand)), f"({text} {arith.TEX[op]} {operand})"
        else:
            value, text = OPS[op](Fraction(operand), value), f"({operand} {arith.TEX[op]} {text})"
    prompt = (
        f"Compute the exact value of ${text[1:-1]}$. Give the final answer as a "
        "reduced fraction or integer in \\boxed{}."
    )
    return prompt, with_form(family, rational(value), "reduced_fraction")


def rationals_reference(
    family: TaskFamily[MathTruth], params: dict[str, Any], r: random.Random
) -> tuple[str, MathTruth]:
    """``RationalsFamily.build`` as it was, in Fractions."""
    value: Fraction | None = None
    text = ""
    for _ in range(params["terms"]):
        num, den = r.randint(1, 12), r.randint(2, params["denominator"])
        q = Fraction(r.choice([-1, 1]) * num, den)
        tex = f"\\frac{{{num}}}{{{den}}}"
        if value is None:
            value, text = q, ("-" if q < 0 else "") + tex
            continue
        op = r.choice(["+", "-", "\\cdot"])
        term = tex if q > 0 else f"\\left(-{tex}\\right)"
        value = value + q if op == "+" else value - q if op == "-" else value * q
        text = f"{text} {op} {term}" if op != "\\cdot" else f"\\left({text}\\right) \\cdot {term}"
    return (
        f"Simplify ${text}$ to a single reduced fraction. Put it in \\boxed{{}}.",
        with_form(family, rational(value or 0), "reduced_fraction"),
    )


CASES = [
    (arith.FAMILY, arith_reference, {"terms": t, "magnitude": m, "division": d})
    for t in (1, 2, 4, 7, 12)
    for m in (1, 2, 9, 99, 999)
    for d in (False, True)
] + [
    (rationals.FAMILY, rationals_reference, {"terms": t, "denominator": d})
    for t in (0, 1, 2, 3, 5, 7)
    for d in (2, 4, 12, 60)
]


@pytest.mark.parametrize("family, reference, params", CASES)
def test_builds_equal_the_fraction_builds(family: Any, reference: Any, params: Any) -> None:
    for at in (family, *family.older.values()):  # every version: the form came in v2
        for seed in range(60):
            r1, r2 = random.Random(seed), random.Random(seed)
            assert at.build(dict(params), r1) == reference(at, dict(params), r2), (params, seed)
            assert r1.getstate() == r2.getstate()  # the same draws, so later ones agree


def test_tasks_of_every_level_equal_the_fraction_builds() -> None:
    for family, reference in (
        (arith.FAMILY, arith_reference),
        (rationals.FAMILY, rationals_reference),
    ):
        for at in (family, *family.older.values()):
            for level in sorted(at.levels):
                for seed in range(150):
                    task = at.task(level, seed)
                    key = derive_seed(at.name, at.version, sorted(task.params.items()), seed)
                    prompt, truth = reference(at, dict(task.params), random.Random(key))
                    assert task.prompt == prompt and task.truth == dump_truth(truth)


pairs = st.tuples(st.integers(-(10**30), 10**30), st.integers(1, 10**30))


@given(pairs, pairs)
def test_each_operation_is_fractions(a: tuple[int, int], b: tuple[int, int]) -> None:
    qa, qb = exact.reduced(*a), exact.reduced(*b)
    fa, fb = Fraction(*a), Fraction(*b)
    assert qa == (fa.numerator, fa.denominator) and qb == (fb.numerator, fb.denominator)
    for name, op in (("add", OPS["+"]), ("sub", OPS["-"]), ("mul", OPS["*"]), ("div", OPS["/"])):
        try:
            want: Any = op(fa, fb)
        except ZeroDivisionError:
            with pytest.raises(ZeroDivisionError):
                getattr(exact, name)(qa, qb)
            continue
        assert getattr(exact, name)(qa, qb) == (want.numerator, want.denominator)
        assert fraction_tex(getattr(exact, name)(qa, qb)) == rational(want)


@given(st.integers(), st.integers())
def test_reduced_is_fraction(num: int, den: int) -> None:
    try:
        want = Fraction(num, den)
    except ZeroDivisionError:
        with pytest.raises(ZeroDivisionError):
            exact.reduced(num, den)
        return
    assert exact.reduced(num, den) == (want.numerator, want.denominator)
    assert fraction_tex(exact.reduced(num, den)) == rational(want)


@pytest.mark.parametrize("q", [0, -3, 7, True, False, Fraction(6, 4), Fraction(-1, 3), 2.5])
def test_rational_of_an_int_is_rational_of_its_fraction(q: Any) -> None:
    f = Fraction(q)
    sign = "-" if f < 0 else ""
    want = (
        str(f.numerator)
        if f.denominator == 1
        else f"{sign}\\frac{{{abs(f.numerator)}}}{{{f.denominator}}}"
    )
    assert rational(q) == want
