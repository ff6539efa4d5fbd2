"""The estimators against closed forms, brute force and published values."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from gymforge.evaluate.estimators import (
    Proportion,
    gap,
    k_ladder,
    mean_pass_at_k,
    mean_pass_hat_k,
    newcombe_interval,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
    z_value,
)

CASES = [(n, c, k) for n in range(1, 9) for c in range(n + 1) for k in range(1, n + 1)]


def subsets(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """(share of k-subsets with a success, share of k-subsets that are all successes)."""
    outcomes = [True] * c + [False] * (n - c)
    combos = list(itertools.combinations(range(n), k))
    anyone = sum(any(outcomes[i] for i in s) for s in combos)
    everyone = sum(all(outcomes[i] for i in s) for s in combos)
    return Fraction(anyone, len(combos)), Fraction(everyone, len(combos))


@pytest.mark.parametrize(("n", "c", "k"), CASES)
def test_pass_at_k_and_pass_hat_k_equal_brute_force_over_all_k_subsets(
    n: int, c: int, k: int
) -> None:
    at_least_one, all_k = subsets(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(float(at_least_one), abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(float(all_k), abs=1e-12)
    # and the closed forms with exact binomials
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
    assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))


def test_pass_at_k_is_stable_where_binomials_overflow_floats() -> None:
    # C(2000, 1000) overflows a float; the product form does not need it
    value = pass_at_k(2000, 3, 1000)
    exact = 1 - Fraction(math.comb(1997, 1000), math.comb(2000, 1000))
    assert value == pytest.approx(float(exact), rel=1e-12)
    assert pass_hat_k(2000, 1990, 5) == pytest.approx(
        float(Fraction(math.comb(1990, 5), math.comb(2000, 5))), rel=1e-12
    )


def test_pass_at_1_is_the_success_rate_and_pass_k_bounds() -> None:
    for n, c in [(10, 3), (5, 0), (5, 5), (16, 9)]:
        assert pass_at_k(n, c, 1) == pytest.approx(c / n)
        assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
        for k in range(1, n + 1):
            assert pass_hat_k(n, c, k) <= c / n + 1e-12 <= pass_at_k(n, c, k) + 2e-12
    assert pass_at_k(10, 8, 3) == 1.0  # fewer than k failures: a success is certain


def test_estimators_refuse_impossible_counts() -> None:
    for args in [(5, 6, 1), (5, 2, 0), (5, 2, 6), (-1, 0, 1)]:
        with pytest.raises(ValueError):
            pass_at_k(*args)
        with pytest.raises(ValueError):
            pass_hat_k(*args)


def test_means_over_tasks_skip_tasks_with_too_few_samples() -> None:
    groups = [(4, 1), (4, 4), (2, 1)]
    assert mean_pass_at_k(groups, 4) == pytest.approx((1.0 + 1.0) / 2)
    assert mean_pass_hat_k(groups, 2) == pytest.approx((0.0 + 1.0 + 0.0) / 3)
    assert mean_pass_at_k([(1, 0)], 2) is None


def test_wilson_matches_published_values() -> None:
    # 95% Wilson score intervals (Newcombe 1998, Table I; Brown, Cai & DasGupta 2001)
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert wilson_interval(15, 148) == pytest.approx((0.0624, 0.1605), abs=5e-5)
    assert wilson_interval(0, 20) == pytest.approx((0.0, 0.1611), abs=5e-5)
    assert wilson_interval(1, 29) == pytest.approx((0.0061, 0.1718), abs=5e-5)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=5e-5)
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize(("c", "n"), [(0, 1), (1, 3), (3, 8), (7, 8), (8, 8), (40, 100)])
def test_wilson_bounds_solve_the_score_equation(c: int, n: int) -> None:
    """The bounds are the p with |p_hat - p| = z sqrt(p (1 - p) / n) (the closed form)."""
    z = z_value(0.95)
    p_hat = c / n
    lo, hi = wilson_interval(c, n)
    assert 0.0 <= lo <= p_hat <= hi <= 1.0
    for bound in (lo, hi):
        if bound in (0.0, 1.0) and bound == p_hat:
            continue  # the degenerate side of 0/n and n/n
        assert abs(p_hat - bound) == pytest.approx(
            z * math.sqrt(bound * (1 - bound) / n), abs=1e-12
        )
    # every p strictly inside satisfies the score inequality, just outside does not
    mid = (lo + hi) / 2
    assert abs(p_hat - mid) <= z * math.sqrt(mid * (1 - mid) / n)
    if hi < 1:
        out = min(1.0, hi + 1e-6)
        assert abs(p_hat - out) > z * math.sqrt(out * (1 - out) / n)


def test_wilson_narrows_with_confidence_and_sample_size() -> None:
    w = lambda c, n, conf=0.95: wilson_interval(c, n, conf)[1] - wilson_interval(c, n, conf)[0]  # noqa: E731
    assert w(5, 10, 0.8) < w(5, 10, 0.95) < w(5, 10, 0.99)
    assert w(50, 100) < w(5, 10)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_newcombe_matches_the_published_example() -> None:
    # Newcombe (1998), "Interval estimation for the difference between independent
    # proportions", example (a): 56/70 - 48/80, method 10 gives 0.0524 to 0.3339
    lo, hi = newcombe_interval(56, 70, 48, 80)
    assert (lo, hi) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    # example (b): 9/10 - 3/10 -> 0.1705 to 0.8090
    assert newcombe_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=5e-5)
    # antisymmetric
    lo2, hi2 = newcombe_interval(48, 80, 56, 70)
    assert (lo2, hi2) == pytest.approx((-hi, -lo))


def test_gap_reports_significance_and_missing_sides() -> None:
    g = gap(Proportion(56, 70), Proportion(48, 80))
    assert g["gap"] == pytest.approx(0.2) and g["significant"] is True
    assert g["method"] == "newcombe-hybrid-score"
    same = gap(Proportion(5, 10), Proportion(5, 10))
    assert same["gap"] == 0 and same["significant"] is False
    assert gap(Proportion(5, 10), Proportion(0, 0))["gap"] is None


def test_k_ladder() -> None:
    assert k_ladder(8, 4) == [1, 2, 4, 8]
    assert k_ladder(5, 3) == [1, 2, 3, 4, 5]
    assert k_ladder(1, 1) == [1]
    assert k_ladder(0, 1) == []
    assert k_ladder(3, 8) == [1, 2, 3]


def test_means_over_tasks_match_hand_counts() -> None:
    """The figures ``world.metrics`` was tested with (it had a second copy of these
    estimators; one family remains, and these values carry over)."""
    groups = [(4, 4), (4, 2), (4, 0)]
    assert mean_pass_hat_k(groups, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert mean_pass_hat_k(groups, 2) == pytest.approx((1 + 1 / 6 + 0) / 3)  # C(2,2)/C(4,2)
    assert mean_pass_hat_k(groups, 4) == pytest.approx(1 / 3)
    assert mean_pass_at_k(groups, 2) == pytest.approx((1 + 5 / 6 + 0) / 3)
    assert mean_pass_hat_k(groups, 5) is None  # no task has 5 attempts
