"""``math.linear``: one linear equation (level 1) or a 2x2 / 3x3 linear system."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from gymforge.envs.math.latex import linear_expr, rational, tuple_of
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily

VARS = ["x", "y", "z"]


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


class LinearFamily(TaskFamily[MathTruth]):
    """Knobs: ``unknowns`` (1-3) and ``coef`` (max |coefficient|)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
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
            rhs = [
                sum((c * s for c, s in zip(row, sol, strict=True)), Fraction(0)) for row in coefs
            ]
            if _solve(
                [[Fraction(c) for c in row] + [b] for row, b in zip(coefs, rhs, strict=True)]
            ):
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
