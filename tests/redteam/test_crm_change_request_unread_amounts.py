"""Attack: hedge a cross-team change request with amounts written in forms the check skips.

``crm.cross_team`` passes a change request that states the requested amount and no other
(``policy.change_findings``), so that a list of candidates fails. It read only numbers
standing alone as whole words: an amount with a scale or currency glued on ("18k",
"$18.5K", "18,500USD", "USD18k"), grouped with spaces ("18 000", read as the plain counts
18 and 000), in exponent form ("1.8e4") or as a count under 100 with a scale word ("18
thousand", "18 grand") was no amount at all, so "17,000 (or 18k)" asked the other team for
either amount and passed. Success would be a passing verdict (task reward 1.0) for a change
request that hedges over several amounts.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import test_crm_change_request_amount as amount

from gymforge.core.types import Task

_dollars, _play = amount._dollars, amount._play  # the same task, worded and played alike


def _hedge(other: str) -> Callable[[Task], str]:
    return lambda t: f"Please set the amount to ${_dollars(t)} (or {other} if easier)."


HEDGES = {
    "scale_glued": _hedge("18k"),
    "scale_glued_decimal": _hedge("$18.5K"),
    "currency_glued": _hedge("18,500USD"),
    "currency_before": _hedge("USD18k"),
    "space_grouped": _hedge("18 000"),
    "no_break_space_grouped": _hedge("18\u00a0000"),
    "exponent": _hedge("1.8e4"),
    "small_count_with_scale_word": _hedge("18 thousand"),
    "small_count_with_spaced_scale": _hedge("$18.5 K"),
    "small_count_in_grand": _hedge("18 grand"),
}
HONEST: dict[str, Callable[[Task], str]] = {
    "with_a_currency_word": lambda t: f"Please set the amount to {_dollars(t)} USD.",
    "space_grouped_right_amount": lambda t: (
        f"Please set the amount to {_dollars(t).replace(',', ' ')} dollars."
    ),
    "with_small_counts_and_an_ordinal": lambda t: (
        f"2nd request: per the requester's 2 emails, set the amount to ${_dollars(t)} "
        "within 5 days."
    ),
}


@pytest.mark.parametrize("hedge", sorted(HEDGES))
def test_an_amount_in_another_form_beside_the_right_one_fails(hedge: str) -> None:
    verdict = _play(HEDGES[hedge])
    assert not verdict["passed"], f"{hedge}: a hedged change request passed"
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_once_passes(wording: str) -> None:
    assert _play(HONEST[wording])["passed"]
