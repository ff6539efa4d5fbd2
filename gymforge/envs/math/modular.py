"""``math.modular``: modular powers and linear congruences."""

from __future__ import annotations

import math
import random
from typing import Any

from gymforge.envs.math.latex import with_form
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.draws import randint


class ModularFamily(TaskFamily[MathTruth]):
    """Knobs: ``kind`` (``power`` or ``congruence``) and ``modulus`` (upper bound)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        m = randint(r, max(5, params["modulus"] // 2), params["modulus"])
        if params["kind"] == "power":
            a, e = randint(r, 2, 10 * m), randint(r, 5, 10 * m)
            return (
                f"Compute ${a}^{{{e}}} \\bmod {m}$ (an integer in $[0, {m - 1}]$). "
                "Put it in \\boxed{}.",
                with_form(self, str(pow(a, e, m)), "integer"),
            )
        while True:
            a = randint(r, 2, m - 1)
            if math.gcd(a, m) == 1:
                break
        x = randint(r, 0, m - 1)
        b = a * x % m
        return (
            f"Find the unique $x$ with $0 \\le x < {m}$ and ${a}x \\equiv {b} "
            f"\\pmod{{{m}}}$. Put it in \\boxed{{}}.",
            with_form(self, str(x), "integer"),
        )


LEVELS = {
    1: ParamSpace({"kind": ChoiceKnob(("power",)), "modulus": IntKnob(11, 31)}),
    2: ParamSpace({"kind": ChoiceKnob(("power", "congruence")), "modulus": IntKnob(14, 97)}),
    3: ParamSpace({"kind": ChoiceKnob(("power", "congruence")), "modulus": IntKnob(98, 9973)}),
}
FAMILY = ModularFamily(
    "math.modular", 2, LEVELS, older={1: ModularFamily("math.modular", 1, LEVELS)}
)

HELDOUT = {"big_congruences": lambda p: p["kind"] == "congruence" and p["modulus"] >= 5000}
