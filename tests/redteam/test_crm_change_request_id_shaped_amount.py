"""Attack: hedge a cross-team change request with another amount shaped as a record id.

``crm.cross_team`` passes a change request that states the requested amount and no other
(``policy.change_findings``). Digits that state no amount are skipped, a record id's among
them, and a record id was read as any word, a hyphen and digits: "USD-18000", "or-18000",
"approx-18000" are no record of the world but were skipped all the same, so "$17,000 (or
USD-18000 if easier)" asked the other team for either amount and passed. Success would be
a passing verdict (task reward 1.0) for a change request that hedges over two amounts.
The defence: only an id of a record the world holds is skipped; any other digits count.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import test_crm_change_request_unread_amounts as unread

from gymforge.core.types import Task

HEDGES: dict[str, Callable[[Task], str]] = {
    name: unread._hedge(other)
    for name, other in {
        "currency_hyphened": "USD-18000",
        "word_hyphened": "or-18000",
        "approx_hyphened": "approx-18000",
        "id_prefix_of_no_record": "OP-18000",
    }.items()
}
HONEST: dict[str, Callable[[Task], str]] = {
    "naming_its_record_and_owner": lambda t: (
        f"Please set the amount of the deal owned by U-11 to ${unread._dollars(t)}."
    ),
}


@pytest.mark.parametrize("hedge", sorted(HEDGES))
def test_an_id_shaped_amount_beside_the_right_one_fails(hedge: str) -> None:
    verdict = unread._play(HEDGES[hedge])
    assert not verdict["passed"], f"{hedge}: a hedged change request passed"
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_beside_record_ids_passes(wording: str) -> None:
    assert unread._play(HONEST[wording])["passed"]
