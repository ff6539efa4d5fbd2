"""``reward.verifier_errors``: a run's verifier-error rate against the scripted baselines'
(one-sided Fisher exact test), as ``gymforge hacks --baseline`` uses it."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.errors import UserError
from gymforge.reward.verifier_errors import ErrorRate, excess_errors, fisher_greater


def exact_greater(x: int, n: int, y: int, m: int) -> Fraction:
    """``P(X >= x)`` of the hypergeometric, in exact fractions."""
    total, errors = n + m, x + y
    return sum(
        (
            Fraction(comb(errors, k) * comb(total - errors, n - k), comb(total, n))
            for k in range(x, min(n, errors) + 1)
        ),
        Fraction(0),
    )


@given(st.data())
def test_fisher_matches_the_exact_sum(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 40))
    m = data.draw(st.integers(1, 40))
    x = data.draw(st.integers(1, n))
    y = data.draw(st.integers(0, m))
    assert fisher_greater(x, n, y, m) == pytest.approx(float(exact_greater(x, n, y, m)), rel=1e-9)


def test_fisher_known_values() -> None:
    assert fisher_greater(4, 8, 0, 8) == pytest.approx(495 / 12870)  # 0.038: significant
    assert fisher_greater(2, 4, 0, 4) == pytest.approx(15 / 70)  # 0.21: four tasks are too few
    assert fisher_greater(0, 8, 0, 8) == 1.0
    assert fisher_greater(500, 1000, 3, 1000) < 1e-100  # large runs stay in floating point


RUN = ErrorRate("openai:m", "swe@1.0.0", 4, 8)


def test_flagged_above_every_baseline() -> None:
    detail = excess_errors(RUN, [ErrorRate("oracle", "swe@1.0.0", 0, 8)])
    assert detail is not None and "openai:m 50% (4/8)" in detail and "oracle 0% (0/8)" in detail


def test_not_flagged_when_a_baseline_errs_as_often_or_the_test_is_not_significant() -> None:
    assert excess_errors(RUN, [ErrorRate("noop", "swe@1.0.0", 4, 8)]) is None
    assert excess_errors(RUN, [ErrorRate("oracle", "swe@1.0.0", 1, 8)]) is None  # p = 0.14
    assert (
        excess_errors(ErrorRate("p", "swe@1.0.0", 2, 4), [ErrorRate("o", "swe@1.0.0", 0, 4)])
        is None
    )
    assert excess_errors(ErrorRate("p", "swe@1.0.0", 0, 8), []) is None


def test_without_baselines_any_verifier_error_is_flagged_against_zero() -> None:
    detail = excess_errors(ErrorRate("p", "swe@1.0.0", 1, 100), [])
    assert detail is not None and "reference is 0" in detail


def test_a_baseline_of_another_environment_is_refused() -> None:
    with pytest.raises(UserError, match=r"not swe@1\.0\.0"):
        excess_errors(RUN, [ErrorRate("oracle", "swe@2.0.0", 0, 8)])
