"""``math.roots``: all real roots of a polynomial with integer roots, as a set."""

from __future__ import annotations

import random
from typing import Any

from gymforge.envs.math.latex import set_of
from gymforge.envs.math.truth import MathTruth, math_truth
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.draws import choice, randint


def expand(roots: list[int], lead: int) -> list[int]:
    """Coefficients (highest degree first) of ``lead * prod(x - r)``."""
    coefs = [lead]
    for root in roots:
        coefs = [a - root * b for a, b in zip([*coefs, 0], [0, *coefs], strict=True)]
    return coefs


def poly_tex(coefs: list[int]) -> str:
    deg = len(coefs) - 1
    out = ""
    for i, c in enumerate(coefs):
        if c == 0:
            continue
        power = deg - i
        var = "" if power == 0 else "x" if power == 1 else f"x^{{{power}}}"
        mag = str(abs(c)) if abs(c) != 1 or power == 0 else ""
        sign = ("-" if c < 0 else "") if not out else (" - " if c < 0 else " + ")
        out += f"{sign}{mag}{var}"
    return out


class RootsFamily(TaskFamily[MathTruth]):
    """Knobs: ``degree`` and ``spread`` (max |root|). Repeated roots count once."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        roots = [randint(r, -params["spread"], params["spread"]) for _ in range(params["degree"])]
        lead = choice(r, [1, 1, 1, -1, 2, -2, 3, 4, 5])
        poly = poly_tex(expand(roots, lead))
        return (
            f"Find all real solutions of ${poly} = 0$. Give them as a set in \\boxed{{}}, "
            "e.g. \\boxed{\\{1, 2\\}}.",
            math_truth(set_of(roots)),
        )


FAMILY = RootsFamily(
    "math.roots",
    1,
    {
        1: ParamSpace({"degree": IntKnob(2, 2), "spread": IntKnob(12, 40)}),
        2: ParamSpace({"degree": IntKnob(3, 3), "spread": IntKnob(8, 20)}),
        3: ParamSpace({"degree": IntKnob(4, 5), "spread": IntKnob(6, 15)}),
    },
)
HELDOUT = {"quintics": lambda p: p["degree"] == 5}
