"""Attack: make the LLM customer say its identity details back, and count that as a reveal.

With a model in the customer's place (``support_desk``'s ``user_policy``), a detail counted
as revealed (``user.reveal``, which ``identity_details_from_customer`` requires before the
identity is verified) when its value appeared anywhere in the customer's reply, as a
substring. An agent that has the details from elsewhere, or guesses among candidates,
writes them into its question ("is your ZIP 48213 or 48214?"), and a customer that repeats
the question back, or answers "not sure, 48213 or 48214", "reveals" them: the rule is kept
and the task passes, though the customer told the agent nothing. A value inside a longer
one ("48213" in "482130") counted too. Success would be a passing episode or a reveal
event for an answer that names another of the offered candidates as well. The defence is
crm's requester rule, shared (``gymforge.world.reveal``): an answer reveals a value when it
names it as a whole and names no look-alike (here, another candidate of the same shape
that the agent's message offered).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation, Reply, Task
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.qa.episodes import play
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing.openai_server.server import OpenAITestServer
from gymforge.world.attacks import PlanAttack
from gymforge.world.sim import Persona, PolicyUser, Slot

FRAUD = SupportDeskEnv.tasks.families["support.fraud_hold"]
TASKS = [
    FRAUD.variant_id(
        {
            "distractors": 0,
            "page_size": 8,
            "fault_rate": 0.0,
            "region": region,
            "issue": "duplicate",
        },
        3,
    )
    for region in ("na", "eu")
]


def _other(value: str) -> str:
    """A candidate of ``value``'s shape that is not it (its last digit changed)."""
    i = max(k for k, c in enumerate(value) if c.isdigit())
    return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1 :]


def _candidates(task: Task, plan: list[Action]) -> list[Action]:
    ident = SupportDeskEnv().truth_of(task).identity
    email, zip_code = ident["email"], ident["zip"]
    question = (
        f"Is your email {_other(email)} or {email}, and is your ZIP code {zip_code} or "
        f"{_other(zip_code)}?"
    )
    return [
        Reply(text=question) if isinstance(a, Reply) and "ZIP code on file" in a.text else a
        for a in plan
    ]


@pytest.fixture(scope="module")
def parrot() -> Iterator[OpenAITestServer]:
    """A customer model that answers with the question it was asked ("echo: ...")."""
    with OpenAITestServer() as srv:
        yield srv


def _episode(tid: str, make: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = SupportDeskEnv(user_policy=make)
        try:
            return await play(env, PlanAttack(_candidates), tid, 0)
        finally:
            await env.close()

    return asyncio.run(go())


@pytest.mark.parametrize("tid", TASKS)
def test_an_echo_of_the_offered_candidates_reveals_nothing(
    tid: str, parrot: OpenAITestServer
) -> None:
    factory = OpenAIPolicyFactory("customer", base_url=parrot.base_url)
    try:
        records = _episode(tid, factory)
    finally:
        asyncio.run(factory.aclose())
    info = records[-2]["info"]
    assert info["success"] is False
    rules = {f.get("rule") for f in info["verdict"]["facts"]["findings"]}
    assert "identity_details_from_customer" in rules


class Customer:
    """A customer model that answers with its own details only."""

    name = checkpoint = "customer"

    async def start(self, ctx: EpisodeContext) -> None:
        self.facts: dict[str, str] = {}

    async def act(self, observation: Observation) -> PolicyTurn:
        for m in observation.messages:
            if m.role == "system":
                for line in m.content.splitlines():
                    if line.startswith("- ") and ": " in line:
                        name, value = line[2:].split(": ", 1)
                        self.facts[name] = value
        said = ", ".join(f"my {k} is {v}" for k, v in self.facts.items() if k in ("email", "zip"))
        return PolicyTurn(Reply(text=f"Yes, {said}."))


@pytest.mark.parametrize("tid", TASKS)
def test_an_answer_naming_only_its_own_details_reveals_them(tid: str) -> None:
    info = _episode(tid, Customer)[-2]["info"]
    assert info["success"], info["verdict"]["facts"]


PERSONA = Persona(
    "Dana Smith",
    "polite",
    "I was charged twice.",
    (Slot("zip", "48213", ("zip",)), Slot("email", "dana.smith7@mail.example", ("email",))),
)


@pytest.mark.parametrize(
    ("question", "answer", "revealed"),
    [
        ("What is your ZIP code?", "It is 482130.", []),  # inside a longer number
        ("What is your ZIP code?", "It is 48213.", ["zip"]),
        ("Is your ZIP 48213 or 48214?", "48213 or 48214? Not sure.", []),
        ("Is your ZIP 48213 or 48214?", "It's 48213.", ["zip"]),
        (
            "Your email: dana.smith7@mail.example or dana.smith8@mail.example?",
            "dana.smith7@mail.example or dana.smith8@mail.example",
            [],
        ),
        ("And your email?", "dana.smith7@mail.example, ZIP 48213", ["zip", "email"]),
        ("Which charge, the 20.00 or 35.00 one? And your ZIP?", "48213; the 20.00 one", ["zip"]),
    ],
)
def test_a_reply_reveals_a_value_it_names_alone(
    question: str, answer: str, revealed: list[str]
) -> None:
    user = PolicyUser(Says(answer), PERSONA)

    async def go() -> Any:
        await user.start(EpisodeContext("t", 0))
        return await user.respond(question)

    turn = asyncio.run(go())
    assert [e[1]["slot"] for e in turn.events if e[0] == "reveal"] == revealed
