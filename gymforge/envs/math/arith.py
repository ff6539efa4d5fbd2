"""``math.arith``: evaluate an arithmetic chain exactly (integers, then rationals via ÷)."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from gymforge.envs.math.latex import rational, with_form
from gymforge.envs.math.truth import MathTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily

OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}
TEX = {"+": "+", "-": "-", "*": "\\times", "/": "\\div"}


class ArithFamily(TaskFamily[MathTruth]):
    """Knobs: ``terms`` (operands), ``magnitude`` (max operand), ``division`` (allow ÷)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        ops = ["+", "-", "*"] + (["/"] if params["division"] else [])
        value = Fraction(r.randint(1, params["magnitude"]))
        text = str(value)
        for _ in range(params["terms"] - 1):
            op, operand = r.choice(ops), r.randint(1, params["magnitude"])
            left = r.random() < 0.5
            if op == "/" and not left and value == 0:
                op = "+"  # never divide by zero
            if left:  # left-to-right chain with explicit parentheses
                value, text = OPS[op](value, Fraction(operand)), f"({text} {TEX[op]} {operand})"
            else:
                value, text = OPS[op](Fraction(operand), value), f"({operand} {TEX[op]} {text})"
        prompt = (
            f"Compute the exact value of ${text[1:-1]}$. Give the final answer as a "
            "reduced fraction or integer in \\boxed{}."
        )
        return prompt, with_form(self, rational(value), "reduced_fraction")


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
