"""Attack: hedge a cross-team change request with another amount grouped by a separator
the check does not read as one.

``crm.cross_team`` passes a change request that states the requested amount and no other
(``policy.change_findings``); a plain number under 100 is a count, never an amount. An
amount grouped by an apostrophe (Swiss "18'000", or with a right quote), a thin space (the SI
separator, U+2009), a middle dot or any other mark between its groups was read as two
numbers, "18" and "000", both "counts under 100", so "$17,000 (or 18'000 if easier)" asked
the other team for either amount and passed. Success would be a passing verdict (task
reward 1.0) for a change request that hedges over two amounts. The defence: a count is
written without a leading zero ("000" and "05" are groups of a larger number), and the
clock times and day/month dates an honest request may hold are not amounts.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import test_crm_change_request_unread_amounts as unread

from gymforge.core.types import Task

HEDGES: dict[str, Callable[[Task], str]] = {
    name: unread._hedge(other)
    for name, other in {
        "apostrophe": "18'000",
        "right_quote": "18\u2019000",
        "thin_space": "18\u2009000",
        "ideographic_space": "18\u3000000",
        "middle_dot": "18\u00b7000",
        "slash": "18/000",
        "colon": "18:000",
    }.items()
}
HONEST: dict[str, Callable[[Task], str]] = {
    "with_a_clock_time": lambda t: (
        f"Please set the amount to ${unread._dollars(t)} before 09:30 on Monday."
    ),
    "with_a_day_and_month": lambda t: (
        f"Please set the amount to ${unread._dollars(t)} by 01/05, as agreed on 28/04/2025."
    ),
}


@pytest.mark.parametrize("hedge", sorted(HEDGES))
def test_a_grouped_amount_beside_the_right_one_fails(hedge: str) -> None:
    verdict = unread._play(HEDGES[hedge])
    assert not verdict["passed"], f"{hedge}: a hedged change request passed"
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_beside_times_and_dates_passes(wording: str) -> None:
    assert unread._play(HONEST[wording])["passed"]
