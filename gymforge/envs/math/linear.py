"""``math.linear``: one linear equation (level 1) or a 2x2 / 3x3 linear system."""

from __future__ import annotations

import random
from typing import Any

from gymforge.envs.math.exact import reduced
from gymforge.envs.math.latex import fraction_tex, linear_expr, rational, tuple_of
from gymforge.envs.math.truth import MathTruth, math_truth
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.draws import choice, randint

VARS = ["x", "y", "z"]


def _det(rows: list[list[int]]) -> int:
    """The determinant of a square integer matrix, exactly (Bareiss: every division is
    exact). Zero exactly when the system is singular, which is all the family needs to know,
    without ``Fraction`` Gauss-Jordan (tests/envs/test_math_linear_build.py keeps that as the
    reference)."""
    m = [row[:] for row in rows]
    n, sign, prev = len(m), 1, 1
    for k in range(n - 1):
        if m[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if m[i][k] != 0), None)
            if swap is None:
                return 0
            m[k], m[swap], sign = m[swap], m[k], -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                m[i][j] = (m[i][j] * m[k][k] - m[i][k] * m[k][j]) // prev
        prev = m[k][k]
    return sign * m[n - 1][n - 1] if n else 1


class LinearFamily(TaskFamily[MathTruth]):
    """Knobs: ``unknowns`` (1-3) and ``coef`` (max |coefficient|)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        n, k = params["unknowns"], params["coef"]
        if n == 1:
            a, c = choice(r, [v for v in range(-k, k + 1) if v]), randint(r, -k, k)
            while a == c:
                c = randint(r, -k, k)
            b, d = randint(r, -k * 3, k * 3), randint(r, -k * 3, k * 3)
            x = reduced(d - b, a - c)
            eq = f"{linear_expr([(a, 'x')], b)} = {linear_expr([(c, 'x')], d)}"
            return (
                f"Solve ${eq}$ for $x$. Put the exact value of $x$ in \\boxed{{}}.",
                math_truth(fraction_tex(x)),
            )
        while True:  # integers throughout: the solution and right-hand sides are integral
            coefs = [[randint(r, -k, k) for _ in range(n)] for _ in range(n)]
            sol = [randint(r, -9, 9) for _ in range(n)]
            if _det(coefs) != 0:
                break
        rhs = [sum(c * s for c, s in zip(row, sol, strict=True)) for row in coefs]
        lines = ", \\quad ".join(
            f"{linear_expr(list(zip(row, VARS, strict=False)))} = {rational(b)}"
            for row, b in zip(coefs, rhs, strict=True)
        )
        names = ", ".join(VARS[:n])
        return (
            f"Solve the system ${lines}$. Give $({names})$ as a tuple in \\boxed{{}}.",
            math_truth(tuple_of(sol)),
        )


FAMILY = LinearFamily(
    "math.linear",
    1,
    {
        1: ParamSpace({"unknowns": IntKnob(1, 1), "coef": IntKnob(2, 12)}),
        2: ParamSpace({"unknowns": IntKnob(2, 2), "coef": IntKnob(2, 9)}),
        3: ParamSpace({"unknowns": IntKnob(3, 3), "coef": IntKnob(2, 9)}),
    },
)
HELDOUT = {"big_3x3": lambda p: p["unknowns"] == 3 and p["coef"] >= 8}
