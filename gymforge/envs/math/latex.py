"""LaTeX rendering of exact values, shared by the math families (gold answers and prompts),
and the answer form a family's prompt demands."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from gymforge.envs.math.exact import Q
from gymforge.envs.math.truth import Form, MathTruth, math_truth
from gymforge.tasks import TaskFamily

FORM_SINCE = 2
"""The family version from which a family whose prompt demands a form declares it."""


def with_form(family: TaskFamily[MathTruth], answer: str, form: Form) -> MathTruth:
    """``truth`` plus the answer ``form`` the prompt demands, from version ``FORM_SINCE`` on
    (earlier versions generated no form, and their tasks replay as they were recorded)."""
    if family.version >= FORM_SINCE:
        return math_truth(answer, form)
    return math_truth(answer)


def rational(q: Fraction | int) -> str:
    """``3``, ``-\\frac{3}{4}``: the canonical gold form of a rational."""
    if type(q) is int:
        return str(q)
    q = Fraction(q)
    return fraction_tex((q.numerator, q.denominator))


def fraction_tex(q: Q) -> str:
    """``rational`` of the reduced pair ``q`` (``exact``)."""
    num, den = q
    if den == 1:
        return str(num)
    sign = "-" if num < 0 else ""
    return f"{sign}\\frac{{{abs(num)}}}{{{den}}}"


def tuple_of(values: Iterable[Fraction | int]) -> str:
    return "(" + ", ".join(rational(v) for v in values) + ")"


def set_of(values: Iterable[Fraction | int]) -> str:
    return "\\{" + ", ".join(rational(v) for v in sorted(set(values))) + "\\}"


def signed_term(coef: int, var: str, first: bool = False) -> str:
    """``+ 3x``, ``- x``, ``2y`` (when first): a linear term as written by hand."""
    if coef == 0:
        return ""
    mag = "" if abs(coef) == 1 and var else str(abs(coef))
    if first:
        return f"{'-' if coef < 0 else ''}{mag}{var}"
    return f" {'-' if coef < 0 else '+'} {mag}{var}"


def linear_expr(coefs: Iterable[tuple[int, str]], const: int = 0) -> str:
    parts = [(c, v) for c, v in coefs if c] + (
        [(const, "")] if const or not any(c for c, _ in coefs) else []
    )
    return "".join(signed_term(c, v, i == 0) for i, (c, v) in enumerate(parts)) or "0"
