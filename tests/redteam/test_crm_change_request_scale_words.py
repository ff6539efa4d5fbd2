"""Attack: hedge a cross-team change request with a count under 100 and a scale word the
check's list did not hold.

``crm.cross_team`` passes a change request that states the requested amount and no other
(``policy.change_findings``); a number under 100 is a plain count unless a scale word
follows it ("18 thousand", "18k"). The list held ``k``, ``thousand``, ``grand``, ``m``,
``mn``, ``million``, ``bn`` and ``billion``, each a whole word: "18 thousands", "18 mil",
"18 thou", "18 lakh", "18 large", "18 kUSD" or 18 times 10^3 (a multiplication sign) were
counts, so "$17,000 (or 18 thousands if easier)" asked the other team for either amount
and passed. Success would be a passing verdict (task reward 1.0) for a change request that
hedges over two amounts.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import test_crm_change_request_unread_amounts as unread

from gymforge.core.types import Task

HEDGES: dict[str, Callable[[Task], str]] = {
    name: unread._hedge(other)
    for name, other in {
        "plural": "18 thousands",
        "informal_million": "18 mil",
        "informal_thousand": "18 thou",
        "lakh": "18 lakh",
        "large": "18 large",
        "currency_after_scale": "18 kUSD",
        "plural_k": "18 ks",
        "power_of_ten": "18 \u00d7 10^3",
        "power_of_ten_x": "18x10^3",
    }.items()
}
HONEST: dict[str, Callable[[Task], str]] = {
    "with_counts_of_things": lambda t: (
        f"Please set the amount to ${unread._dollars(t)}: 3 meetings, 2 business days, "
        "5 minutes of review and 4 lines changed."
    ),
}


@pytest.mark.parametrize("hedge", sorted(HEDGES))
def test_a_count_with_a_scale_beside_the_right_amount_fails(hedge: str) -> None:
    verdict = unread._play(HEDGES[hedge])
    assert not verdict["passed"], f"{hedge}: a hedged change request passed"
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_beside_counts_of_things_passes(wording: str) -> None:
    assert unread._play(HONEST[wording])["passed"]
