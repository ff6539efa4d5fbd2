"""``math.arith``: evaluate an arithmetic chain exactly (integers, then rationals via ÷)."""

from __future__ import annotations

import random
from typing import Any

from gymforge.envs.math.exact import Q, add, div, mul, sub
from gymforge.envs.math.latex import fraction_tex, with_form
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.draws import choice, randint

OPS = {"+": add, "-": sub, "*": mul, "/": div}
TEX = {"+": "+", "-": "-", "*": "\\times", "/": "\\div"}


class ArithFamily(TaskFamily[MathTruth]):
    """Knobs: ``terms`` (operands), ``magnitude`` (max operand), ``division`` (allow ÷)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        ops = ["+", "-", "*"] + (["/"] if params["division"] else [])
        first = randint(r, 1, params["magnitude"])
        value: Q = (first, 1)
        text = str(first)
        for _ in range(params["terms"] - 1):
            op, operand = choice(r, ops), randint(r, 1, params["magnitude"])
            left = r.random() < 0.5
            if op == "/" and not left and value[0] == 0:
                op = "+"  # never divide by zero
            if left:  # left-to-right chain with explicit parentheses
                value, text = OPS[op](value, (operand, 1)), f"({text} {TEX[op]} {operand})"
            else:
                value, text = OPS[op]((operand, 1), value), f"({operand} {TEX[op]} {text})"
        prompt = (
            f"Compute the exact value of ${text[1:-1]}$. Give the final answer as a "
            "reduced fraction or integer in \\boxed{}."
        )
        return prompt, with_form(self, fraction_tex(value), "reduced_fraction")


LEVELS = {
    1: ParamSpace(
        {"terms": IntKnob(3, 4), "magnitude": IntKnob(9, 20), "division": ChoiceKnob((False,))}
    ),
    2: ParamSpace(
        {
            "terms": IntKnob(5, 7),
            "magnitude": IntKnob(21, 99),
            "division": ChoiceKnob((False, True)),
        }
    ),
    3: ParamSpace(
        {
            "terms": IntKnob(8, 12),
            "magnitude": IntKnob(100, 999),
            "division": ChoiceKnob((True,)),
        }
    ),
}
FAMILY = ArithFamily("math.arith", 2, LEVELS, older={1: ArithFamily("math.arith", 1, LEVELS)})

HELDOUT = {"long_chains": lambda p: p["terms"] >= 11}
