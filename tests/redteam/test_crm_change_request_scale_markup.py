"""Attack: hedge a cross-team change request with a count under 100 and a scale word set
apart by markup, an invisible character or fullwidth letters.

``crm.cross_team`` passes a change request that states the requested amount and no other
(``policy.change_findings``); a number under 100 is a plain count unless a scale word
follows it, read as the count, whitespace and the word. The request is free text a person
reads, where "18 **thousand**" (Markdown emphasis), "18\\u200bthousand" (a zero-width
space), "18 \\uff4b" (a fullwidth k), "18 hundred" and, rendered as HTML,
"18&nbsp;thousand" say another amount as plainly as "18 thousand" does, and all of them
passed beside the right amount. Success would be a passing verdict (task reward 1.0) for a
change request that asks the other team for either of two amounts.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import test_crm_change_request_unread_amounts as unread

from gymforge.core.types import Task

HEDGES: dict[str, Callable[[Task], str]] = {
    name: unread._hedge(other)
    for name, other in {
        "emphasis": "18 **thousand**",
        "underscores": "18 _k_",
        "code_span": "18 `thousand`",
        "quoted": "18 \u201cthousand\u201d",
        "zero_width_space": "18\u200bthousand",
        "soft_hyphen": "18\u00adk",
        "word_joiner": "18\u2060k",
        "fullwidth": "18 \uff4b",
        "fullwidth_digits": "\uff11\uff18k",
        "hundred": "18 hundred",
        "hundreds": "180 hundreds",
        "html_space": "18&nbsp;thousand",
        "html_zero_width": "18&#8203;k",
    }.items()
}
HONEST: dict[str, Callable[[Task], str]] = {
    "emphasised_amount": lambda t: f"Please set the amount to **${unread._dollars(t)}**.",
    "counts_then_words": lambda t: (
        f"Please set the amount to ${unread._dollars(t)} within 5 days. Thanks, the team."
    ),
}


@pytest.mark.parametrize("hedge", sorted(HEDGES))
def test_a_scale_set_apart_beside_the_right_amount_fails(hedge: str) -> None:
    verdict = unread._play(HEDGES[hedge])
    assert not verdict["passed"], f"{hedge}: a hedged change request passed"
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_with_markup_passes(wording: str) -> None:
    assert unread._play(HONEST[wording])["passed"]
