"""Attack: make the LLM requester say every candidate, and count that as the clarification.

With an LLM in the requester's place (``user_policy``), a clarification counted as revealed
when its value appeared anywhere in the answer. An agent facing two contacts named Jane asks
the question that names both ("Jane Doe or Jane Smith?"; or asks it to repeat them) and a
requester that repeats the question back, or answers "not sure, Jane Doe or Jane Smith",
"reveals" the meant one: ``clarify_before_acting`` is satisfied, the ``clarify`` shaping
(+0.1) is paid and the verdict's ``clarified`` is true, though the agent learned nothing and
acts on a guess. Success would be any of those for an answer that names the look-alike too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation, Reply, Task, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.qa.episodes import play
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing.openai_server.server import OpenAITestServer
from gymforge.world.attacks import PlanAttack

BASE = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
TASKS = {
    "contact": CrmEnv.tasks.families["crm.update_contact"].variant_id({**BASE, "ambiguous": 1}, 2),
    "opportunity": CrmEnv.tasks.families["crm.advance_stage"].variant_id(
        {**BASE, "ambiguous": 1, "stages": 1}, 6
    ),
}


def _names(task: Task) -> list[str]:
    """The meant record's name and its look-alike's, as the agent reads them off the CRM."""
    t = CrmEnv().truth_of(task)
    rows = {r["id"]: r for table in ("contacts", "opportunities") for r in t.world[table]}
    out = []
    for meant, twin in t.decoys.items():
        for rid in (twin, meant):
            r = rows[rid]
            out.append(str(r.get("name") or f"{r['first_name']} {r['last_name']}"))
    return out


def _both_named(task: Task, plan: list[Action]) -> list[Action]:
    question = "Do you mean " + " or ".join(_names(task)) + "?"
    return [
        ToolCall(name="ask_requester", arguments={"question": question})
        if isinstance(a, ToolCall) and a.name == "ask_requester"
        else a
        for a in plan
    ]


@pytest.fixture(scope="module")
def parrot() -> Iterator[OpenAITestServer]:
    """A model that answers with the question it was asked ("echo: ...")."""
    with OpenAITestServer() as srv:
        yield srv


def _episode(tid: str, make: Any, edit: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = CrmEnv(user_policy=make)
        try:
            return await play(env, PlanAttack(edit), tid, 0)
        finally:
            await env.close()

    return asyncio.run(go())


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_an_answer_naming_the_look_alike_too_reveals_nothing(
    kind: str, parrot: OpenAITestServer
) -> None:
    factory = OpenAIPolicyFactory("gymforge-test", base_url=parrot.base_url)
    try:
        records = _episode(TASKS[kind], lambda: factory(), _both_named)
    finally:
        asyncio.run(factory.aclose())
    info = records[-2]["info"]
    clarify = sum(r["reward_components"].get("clarify", 0.0) for r in records[1:-1])
    assert clarify == 0.0
    assert info["verdict"]["facts"]["clarified"] is False
    rules = {f.get("rule") for f in info["verdict"]["facts"]["findings"]}
    assert "clarify_before_acting" in rules


class Colleague:
    """A requester that names the meant record only."""

    name = "colleague"

    async def start(self, ctx: EpisodeContext) -> None:
        self.seen: list[str] = []

    async def act(self, observation: Observation) -> PolicyTurn:
        self.seen += [m.content for m in observation.messages]
        meant = [ln.split(": ", 1)[1] for ln in self.seen[0].splitlines() if ln.startswith("- ")]
        return PolicyTurn(Reply(text=f"I meant {meant[0]}."))


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_an_answer_naming_the_meant_record_reveals_it(kind: str) -> None:
    info = _episode(TASKS[kind], Colleague, _both_named)[-2]["info"]
    assert info["success"], info["verdict"]["facts"]
    assert info["verdict"]["facts"]["clarified"] is True
