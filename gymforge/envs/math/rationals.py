"""``math.rationals``: combine fractions exactly and reduce."""

from __future__ import annotations

import random
from typing import Any

from gymforge.envs.math.exact import Q, add, mul, reduced, sub
from gymforge.envs.math.latex import fraction_tex, with_form
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.draws import choice, randint


class RationalsFamily(TaskFamily[MathTruth]):
    """Knobs: ``terms`` (fractions combined) and ``denominator`` (max denominator)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        value: Q | None = None
        text = ""
        for _ in range(params["terms"]):
            num, den = randint(r, 1, 12), randint(r, 2, params["denominator"])
            q = reduced(choice(r, [-1, 1]) * num, den)
            tex = f"\\frac{{{num}}}{{{den}}}"
            if value is None:
                value, text = q, ("-" if q[0] < 0 else "") + tex
                continue
            op = choice(r, ["+", "-", "\\cdot"])
            term = tex if q[0] > 0 else f"\\left(-{tex}\\right)"
            value = add(value, q) if op == "+" else sub(value, q) if op == "-" else mul(value, q)
            text = (
                f"{text} {op} {term}" if op != "\\cdot" else f"\\left({text}\\right) \\cdot {term}"
            )
        return (
            f"Simplify ${text}$ to a single reduced fraction. Put it in \\boxed{{}}.",
            with_form(self, fraction_tex(value or (0, 1)), "reduced_fraction"),
        )


LEVELS = {
    1: ParamSpace({"terms": IntKnob(2, 2), "denominator": IntKnob(4, 12)}),
    2: ParamSpace({"terms": IntKnob(3, 4), "denominator": IntKnob(6, 30)}),
    3: ParamSpace({"terms": IntKnob(5, 7), "denominator": IntKnob(12, 60)}),
}
FAMILY = RationalsFamily(
    "math.rationals", 2, LEVELS, older={1: RationalsFamily("math.rationals", 1, LEVELS)}
)

HELDOUT = {"seven_terms": lambda p: p["terms"] == 7}
