"""``math.linear`` builds its systems with integers only: the same tasks as the Fraction
build it replaced (kept here as the reference), and ``_det`` is zero exactly when the
Gauss-Jordan ``_solve`` finds the system singular."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.seeding import derive_seed
from gymforge.envs.math.latex import linear_expr, rational, tuple_of
from gymforge.envs.math.linear import FAMILY, VARS, _det
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks.truth_dump import dump_truth
from tests.budget import examples


def _solve(rows: list[list[Fraction]]) -> list[Fraction] | None:
    """Gauss-Jordan on an augmented matrix; None if singular."""
    n = len(rows)
    m = [row[:] for row in rows]
    for col in range(n):
        pivot = next((i for i in range(col, n) if m[i][col] != 0), None)
        if pivot is None:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for i in range(n):
            if i != col and m[i][col] != 0:
                f = m[i][col] / m[col][col]
                m[i] = [a - f * b for a, b in zip(m[i], m[col], strict=True)]
    return [m[i][n] / m[i][i] for i in range(n)]


def reference_build(params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
    """``LinearFamily.build`` as it was, in Fractions throughout."""
    n, k = params["unknowns"], params["coef"]
    if n == 1:
        a, c = r.choice([v for v in range(-k, k + 1) if v]), r.randint(-k, k)
        while a == c:
            c = r.randint(-k, k)
        b, d = r.randint(-k * 3, k * 3), r.randint(-k * 3, k * 3)
        x = Fraction(d - b, a - c)
        eq = f"{linear_expr([(a, 'x')], b)} = {linear_expr([(c, 'x')], d)}"
        return (
            f"Solve ${eq}$ for $x$. Put the exact value of $x$ in \\boxed{{}}.",
            MathTruth(answer=rational(x)),
        )
    while True:
        coefs = [[r.randint(-k, k) for _ in range(n)] for _ in range(n)]
        sol = [Fraction(r.randint(-9, 9)) for _ in range(n)]
        rhs = [sum((c * s for c, s in zip(row, sol, strict=True)), Fraction(0)) for row in coefs]
        if _solve([[Fraction(c) for c in row] + [b] for row, b in zip(coefs, rhs, strict=True)]):
            break
    lines = ", \\quad ".join(
        f"{linear_expr(list(zip(row, VARS, strict=False)))} = {rational(b)}"
        for row, b in zip(coefs, rhs, strict=True)
    )
    names = ", ".join(VARS[:n])
    return (
        f"Solve the system ${lines}$. Give $({names})$ as a tuple in \\boxed{{}}.",
        MathTruth(answer=tuple_of(sol)),
    )


def test_builds_equal_the_fraction_build() -> None:
    for unknowns in (1, 2, 3):
        for coef in (1, 2, 3, 5, 9, 12):
            params = {"unknowns": unknowns, "coef": coef}
            for seed in range(300):
                r1, r2 = random.Random(seed), random.Random(seed)
                assert FAMILY.build(params, r1) == reference_build(params, r2), (params, seed)
                assert r1.getstate() == r2.getstate()  # the same draws, so later ones agree


def test_tasks_of_every_level_equal_the_fraction_build() -> None:
    for level in sorted(FAMILY.levels):
        for seed in range(200):
            task = FAMILY.task(level, seed)
            params = FAMILY.params_for(level, seed)
            key = derive_seed(FAMILY.name, FAMILY.version, sorted(params.items()), seed)
            prompt, truth = reference_build(dict(params), random.Random(key))
            assert task.prompt == prompt and task.truth == dump_truth(truth)


matrices = st.integers(1, 4).flatmap(
    lambda n: st.lists(
        st.lists(st.integers(-12, 12) | st.sampled_from([0]), min_size=n, max_size=n),
        min_size=n,
        max_size=n,
    )
)


@examples(2000)
def test_det_is_zero_exactly_when_solve_finds_it_singular(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(matrices, st.lists(st.integers(-9, 9), min_size=4, max_size=4))
    def check(rows: list[list[int]], sol: list[int]) -> None:
        rhs = [sum(c * s for c, s in zip(row, sol, strict=False)) for row in rows]
        aug = [[Fraction(c) for c in row] + [Fraction(b)] for row, b in zip(rows, rhs, strict=True)]
        assert (_det(rows) == 0) == (_solve(aug) is None)

    check()


@examples(500)
def test_det_is_the_determinant(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(matrices)
    def check(rows: list[list[int]]) -> None:
        def laplace(m: list[list[int]]) -> int:
            if len(m) == 1:
                return m[0][0]
            return sum(
                (-1) ** j * m[0][j] * laplace([row[:j] + row[j + 1 :] for row in m[1:]])
                for j in range(len(m))
            )

        assert _det(rows) == laplace(rows)

    check()
