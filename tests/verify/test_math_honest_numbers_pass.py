"""Right answers written the way models write them pass a task that asks for a number.

Math 1.2.0 made a task that asks for a number (``integer``, ``reduced_fraction``, the
``number`` option) refuse a computation of the gold's value (``unevaluated``), so that the
question copied into the box is not paid. Three honest notations were refused with it or
before it, and pass from math 1.3.0:

- an equation chain whose last side is the number written out, every side the gold's value
  (``\\frac{3}{4} = 0.75``, ``3 \\cdot 4 = 12``, ``x = 3 \\cdot 4 = 12``): it reads as its
  last side, for the form too; the question copied as ``expr = expr`` is still refused;
- thousands set off by a thin or no-break space (U+2009, U+202F, U+00A0, LaTeX's ``~``),
  as by a space;
- a residue written with its modulus (``5 \\pmod{7}``, ``x \\equiv 5 \\pmod{7}``,
  ``5 \\bmod 7``) when the residue is an integer numeral below the modulus, where the
  congruence and the operator readings are the same number; and a leading en dash as the
  minus sign (``\\u2013 12``), where it cannot be a range.
"""

from __future__ import annotations

import pytest

from gymforge.verify.math import MathVerifier


def _verdict(answer: str, gold: str, **options: object):
    return MathVerifier().verify(f"So the answer is \\boxed{{{answer}}}.", gold, **options)


@pytest.mark.parametrize(
    ("answer", "gold", "form", "form_ok"),
    [
        ("\\frac{3}{4} = 0.75", "\\frac{3}{4}", "reduced_fraction", False),  # read as 0.75
        ("0.75 = \\frac{3}{4}", "\\frac{3}{4}", "reduced_fraction", True),
        ("\\frac{6}{8} = \\frac{3}{4}", "\\frac{3}{4}", "reduced_fraction", True),
        ("3 \\cdot 4 = 12", "12", "integer", True),
        ("x = 3 \\cdot 4 = 12", "12", "integer", True),
        ("2 + 3 = 5", "5", "integer", True),
        ("(5 \\times 6) - 18 = 12", "12", "integer", True),
        ("-\\frac{6}{8} = -\\frac{3}{4}", "-\\frac{3}{4}", "reduced_fraction", True),
        ("\\frac{24}{2} = 12", "12", "reduced_fraction", True),
    ],
)
def test_an_equation_chain_ending_in_the_number_passes(
    answer: str, gold: str, form: str, form_ok: bool
) -> None:
    v = _verdict(answer, gold, form=form)
    assert v.passed and v.facts["form_ok"] is form_ok, (answer, v.reason, v.facts)
    assert _verdict(answer, gold, number=True).passed, answer  # version-1 ids: no form


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("3 \\cdot 4 = 13", "not_equal"),  # a side of another value
        ("13 = 12", "not_equal"),
        ("3 \\cdot 4 = 2 \\cdot 6", "unevaluated"),  # the question copied as expr = expr
        ("12 = 3 \\cdot 4", "unevaluated"),  # the last side is no number written out
        ("x = 3 \\cdot 4", "unevaluated"),
        ("12 \\approx 3 \\cdot 4", "unevaluated"),
    ],
)
def test_a_chain_with_a_wrong_or_unevaluated_last_side_fails(answer: str, reason: str) -> None:
    for form in ("integer", "reduced_fraction"):
        v = _verdict(answer, "12", form=form)
        assert not v.passed and v.reason == reason, (answer, form, v.reason)


@pytest.mark.parametrize("space", ["\u2009", "\u202f", "\u00a0", "~"])
def test_thousands_set_off_by_a_thin_or_no_break_space_pass(space: str) -> None:
    for answer, gold in (("185 000", "185000"), ("-1 234 567", "-1234567")):
        v = _verdict(answer.replace(" ", space), gold, form="integer")
        assert v.passed and v.facts["form_ok"], (repr(answer), v.reason)
    assert not _verdict(f"1{space}00", "100", form="integer").passed


@pytest.mark.parametrize(
    "answer",
    [
        "5 \\pmod{7}", "5 \\pmod 7", "5 \\; \\pmod{7}", "5 \\bmod 7", "5 \\mod 7", "5 \\mod{7}",
        "x \\equiv 5 \\pmod{7}", "x \\equiv 5 \\pmod 7", "\\equiv 5 \\pmod{7}",
        "5 \\ (\\text{mod } 7)", "5 \\; (\\mathrm{mod}\\ 7)", "5 \\left(\\text{mod } 7\\right)",
        "5 \\text{ (mod 7)}",
    ],
)  # fmt: skip
def test_a_residue_written_with_its_modulus_passes(answer: str) -> None:
    v = _verdict(answer, "5", form="integer")
    assert v.passed and v.facts["form_ok"], (answer, v.reason, v.facts)


@pytest.mark.parametrize(
    "answer",
    [
        "12 \\pmod{7}",  # not below the modulus: the residue is 5, not 12
        "12 \\bmod 7",
        "4 \\pmod{7}",
        "5 \\pmod{5}",
        "2^{5} \\bmod 7",  # the question copied: a computation
        "19 - 14 \\pmod{7}",
        "5 \\pmod{7} 5",
        "5 \\pmod{7} \\text{ or } 6",
    ],
)
def test_a_residue_not_below_its_modulus_or_a_computation_fails(answer: str) -> None:
    v = _verdict(answer, "5", form="integer")
    assert not v.passed, (answer, v.reason, v.facts)


def test_a_gold_with_a_modulus_is_read_as_before() -> None:
    """Only the answer's modulus is read as a label of its residue: a gold that states one
    (``3 \\pmod{7}``) is compared as before, so another modulus cannot pass it."""
    assert not _verdict("3 \\pmod{5}", "3 \\pmod{7}").passed


@pytest.mark.parametrize(
    ("answer", "gold"),
    [("\u201312", "-12"), ("x = \u20133", "-3"), ("\u2013\\frac{3}{4}", "-\\frac{3}{4}"),
     ("\\frac{\u20133}{4}", "-\\frac{3}{4}"), ("(\u20132, 5)", "(-2, 5)")],
)  # fmt: skip
def test_a_leading_en_dash_reads_as_minus(answer: str, gold: str) -> None:
    assert _verdict(answer, gold).passed, answer
    assert _verdict(answer, gold, number=True).passed or "," in gold, answer


def test_an_en_dash_between_numbers_is_no_minus() -> None:
    """``3 \\u2013 5`` is a range; read as ``3 - 5`` it would answer -2."""
    assert not _verdict("3\u20135", "-2").passed
    assert not _verdict("3 \u2013 5", "-2").passed
