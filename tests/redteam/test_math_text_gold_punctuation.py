"""Attack: answer a gold the math parser reads only as text with its characters in any order
of signs, subscripts and exponents.

A gold the parser cannot read (MATH-500's base-n numerals ``52_8`` and ``4210_{5}``,
published expression golds such as ``-3 b^{4}+13 b^{3}-7 b^{2}``) is compared as text, and
that comparison dropped every character that is not a letter or a digit: ``528`` (a decimal
number, not 42) answered ``52_8``, so did ``-528`` and ``5^{28}``; any sign pattern answered
the expression; ``\\text{-x}`` and ``\\text{x!}`` answered the symbol gold ``x``. Success would
mean reward for a base-confused or sign-flipped answer. The defence: text comparison drops
only what does not change what the text says (spaces, braces, brackets, ``$``, wrappers such
as ``\\text{}``, a full stop or comma that is not inside a number, a hyphen inside a word,
case for text golds); signs, ``_``, ``^``, ``/``, ``=`` and the like stay.
"""

from __future__ import annotations

import pytest

from gymforge.verify.math.equiv import is_equivalent

WRONG = [
    ("528", "52_8"),
    ("-528", "52_8"),
    ("5^{28}", "52_8"),
    ("52.8", "52_8"),
    ("\\frac{52}{8}", "52_8"),
    ("42105", "4210_{5}"),
    ("3b^4+13b^3+7b^2", "-3 b^{4}+13 b^{3}-7 b^{2}-"),
    ("\\text{-x}", "x"),
    ("\\text{x!}", "x"),
    ("\\text{1/C}", "\\text{(C)}"),
]
RIGHT = [
    ("52_8", "52_8"),
    ("52_{8}", "52_8"),
    ("\\text{52}_8", "52_8"),
    ("4210_5", "4210_{5}"),
    ("C", "\\text{(C)}"),
    ("(C)", "\\text{(C)}"),
    ("\\textbf{(C)}", "\\text{(C)}"),
    ("\\text{C.}", "\\text{(C)}"),
    ("Evelyn", "\\text{Evelyn}"),
    ("\\text{EVELYN}", "\\text{Evelyn}"),
    ("\\text{x}", "x"),
    ("\\text{necessary, but not sufficient.}", "\\text{necessary but not sufficient}"),
    ("\\text{x-axis}", "\\text{x axis}"),
    ("-3b^4+13b^3-7b^2-", "-3 b^{4}+13 b^{3}-7 b^{2}-"),
]


@pytest.mark.parametrize(("answer", "gold"), WRONG)
def test_a_different_text_does_not_answer(answer: str, gold: str) -> None:
    out = is_equivalent(answer, gold)
    assert not out.equal, (answer, gold, out)


@pytest.mark.parametrize(("answer", "gold"), RIGHT)
def test_the_same_text_still_answers(answer: str, gold: str) -> None:
    out = is_equivalent(answer, gold)
    assert out.equal, (answer, gold, out)
