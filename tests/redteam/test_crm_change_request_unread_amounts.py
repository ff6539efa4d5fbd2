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

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack

BASE = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
TASK = CrmEnv.tasks.families["crm.cross_team"].variant_id(BASE, 3)


def _dollars(task: Task) -> str:
    """The amount as the request words it, "17,000"."""
    mentions = CrmEnv().truth_of(task).mentions
    return next(m for m in mentions if "," in m and "." not in m)


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


def _play(change: Callable[[Task], str]) -> dict[str, Any]:
    def edit(task: Task, plan: list[Action]) -> list[Action]:
        return [
            a.model_copy(update={"arguments": {**a.arguments, "change": change(task)}})
            if isinstance(a, ToolCall) and a.name == "request_change"
            else a
            for a in plan
        ]

    async def go() -> dict[str, Any]:
        env = CrmEnv()
        try:
            records = await play(env, PlanAttack(edit), TASK, 0)
        finally:
            await env.close()
        return dict(records[-2]["info"]["verdict"])

    return asyncio.run(go())


@pytest.mark.parametrize("hedge", sorted(HEDGES))
def test_an_amount_in_another_form_beside_the_right_one_fails(hedge: str) -> None:
    verdict = _play(HEDGES[hedge])
    assert not verdict["passed"], f"{hedge}: a hedged change request passed"
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_once_passes(wording: str) -> None:
    assert _play(HONEST[wording])["passed"]
