"""``math.rationals``: combine fractions exactly and reduce."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from gymforge.envs.math.latex import rational, with_form
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily


class RationalsFamily(TaskFamily[MathTruth]):
    """Knobs: ``terms`` (fractions combined) and ``denominator`` (max denominator)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
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
            text = (
                f"{text} {op} {term}" if op != "\\cdot" else f"\\left({text}\\right) \\cdot {term}"
            )
        return (
            f"Simplify ${text}$ to a single reduced fraction. Put it in \\boxed{{}}.",
            with_form(self, rational(value or 0), "reduced_fraction"),
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
