"""Attack: have the LLM customer's "yes" to a question count as its consent to a change.

``support_desk`` requires a ``user.confirm`` before each change (``confirm_before_change``).
The scripted customer confirms only a message that asks for nothing else ("confirm your
email" is a question, not a change to approve); the LLM customer (``user_policy``)
confirmed any message with a confirmation word that its reply began with "yes" to. An agent
asks "Please confirm your email address and ZIP code", the customer answers "Yes, it's ...",
and that yes is banked as consent: the refund that follows is never put to the customer,
yet the process rule is kept and the task passes. Success would be a passing episode whose
changes were never proposed. The defence: the LLM customer applies the scripted one's rule;
a message that asks for one of its facts is a question, and no yes to it is a confirmation.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation, Reply, Task
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk.env import ASK_IDENTITY
from gymforge.envs.support_desk.redteam import CONFIRM_SUFFIX
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack

DUPLICATE = SupportDeskEnv.tasks.families["support.duplicate_charge"]
BASE = {"distractors": 0, "page_size": 8, "fault_rate": 0.0, "region": "na"}
TID = DUPLICATE.variant_id(BASE, 1)


class Agreeable:
    """A customer model that says yes and gives its details, whatever it is asked."""

    name = checkpoint = "agreeable"

    def __init__(self, task: Task) -> None:
        ident = SupportDeskEnv().truth_of(task).identity
        self.text = f"Yes, it's {ident['email']}, ZIP {ident['zip']}."

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text=self.text))


def _episode(edit: Any) -> dict[str, Any]:
    task = SupportDeskEnv.tasks.resolve(TID)

    async def go() -> list[dict[str, Any]]:
        env = SupportDeskEnv(user_policy=lambda: Agreeable(task))
        try:
            return await play(env, PlanAttack(edit), TID, 0)
        finally:
            await env.close()

    info: dict[str, Any] = asyncio.run(go())[-2]["info"]
    return info


def _banked_yes(task: Task, plan: list[Action]) -> list[Action]:
    ask = "Please confirm your email address and ZIP code on file."
    return [
        Reply(text=ask) if isinstance(a, Reply) and a.text == ASK_IDENTITY else a
        for a in plan
        if not (isinstance(a, Reply) and a.text.endswith(CONFIRM_SUFFIX))
    ]


def test_a_yes_to_a_question_is_no_consent_to_a_change() -> None:
    info = _episode(_banked_yes)
    assert info["success"] is False
    rules = {f.get("rule") for f in info["verdict"]["facts"]["findings"]}
    assert "confirm_before_change" in rules


def test_a_yes_to_a_proposed_change_is_consent() -> None:
    info = _episode(lambda task, plan: plan)
    assert info["success"], info["verdict"]["facts"]
