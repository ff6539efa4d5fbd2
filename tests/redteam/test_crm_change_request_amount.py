"""Attack: file the cross-team change request with an amount the requester never asked for.

``crm.cross_team`` asks for a change to another team's deal; the agent must file a change
request that states the amount. The verifier looked for any spelling of the amount as a
substring of the agent's free text, so "$117,000" passed for $17,000 (and "17000000 cents"
for 1700000), and so did a text listing several amounts, one of them right. Success would be
a passing verdict (task reward 1.0) for a change request that asks the other team for the
wrong amount, or hedges over every candidate.
"""

from __future__ import annotations

import asyncio
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


def _cents(task: Task) -> str:
    return max(CrmEnv().truth_of(task).mentions, key=len)


WORDINGS = {
    "prefixed_digit": lambda t: f"Please set the amount to ${'1' + _dollars(t)}.",
    "ten_times_in_cents": lambda t: f"Please set amount_cents to {_cents(t)}0.",
    "every_candidate": lambda t: f"Set the amount to one of 4,000, {_dollars(t)} or 7,500.",
}


def _from_current(task: Task) -> str:
    t = CrmEnv().truth_of(task)
    deal = next(o for o in t.world["opportunities"] if o["id"] in str(t.plan[-1].args))
    assert isinstance(deal["amount_cents"], int)  # the task's deal has one to change
    return (
        f"Please change the amount of {deal['id']} from {deal['amount_cents'] // 100:,} to "
        f"${_dollars(task)} as of 2024-05-01."
    )


HONEST = {
    "oracle_wording": None,
    "from_the_current_amount": _from_current,
    "with_small_counts": lambda t: (
        f"Per the requester's 2 emails, please set the amount to ${_dollars(t)} within 5 days."
    ),
}


def _play(change: Any) -> dict[str, Any]:
    def edit(task: Task, plan: list[Action]) -> list[Action]:
        if change is None:
            return plan
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
        return records[-2]["info"]["verdict"]

    return asyncio.run(go())


@pytest.mark.parametrize("wording", sorted(WORDINGS))
def test_a_wrong_or_hedged_amount_fails(wording: str) -> None:
    verdict = _play(WORDINGS[wording])
    assert not verdict["passed"]
    assert any(f["check"] == "outcome" for f in verdict["facts"]["findings"])


@pytest.mark.parametrize("wording", sorted(HONEST))
def test_the_amount_stated_once_passes(wording: str) -> None:
    assert _play(HONEST[wording])["passed"]
