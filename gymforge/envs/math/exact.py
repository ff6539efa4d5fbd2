"""Exact rational arithmetic on ``(numerator, denominator)`` int pairs, for the families that
build their gold answers from chains of operations (``arith``, ``rationals``, ``linear``).

A value is always reduced with a positive denominator, the form ``Fraction`` keeps, so a
chain computes the very numerator and denominator ``Fraction`` would, without its
Python-level type dispatch on every operation (``tests/envs/test_math_exact.py`` holds the
two equal, and the builds equal to their ``Fraction`` versions).
"""

from __future__ import annotations

from math import gcd

Q = tuple[int, int]
"""``(numerator, denominator)``: in lowest terms, the denominator positive."""


def reduced(num: int, den: int) -> Q:
    """``num / den`` in lowest terms; ZeroDivisionError for a zero ``den``, as ``Fraction``."""
    if den == 0:
        raise ZeroDivisionError(f"Fraction({num}, 0)")
    if den < 0:
        num, den = -num, -den
    g = gcd(num, den)
    return (num // g, den // g) if g != 1 else (num, den)


def add(a: Q, b: Q) -> Q:
    return reduced(a[0] * b[1] + b[0] * a[1], a[1] * b[1])


def sub(a: Q, b: Q) -> Q:
    return reduced(a[0] * b[1] - b[0] * a[1], a[1] * b[1])


def mul(a: Q, b: Q) -> Q:
    return reduced(a[0] * b[0], a[1] * b[1])


def div(a: Q, b: Q) -> Q:
    return reduced(a[0] * b[1], a[1] * b[0])
