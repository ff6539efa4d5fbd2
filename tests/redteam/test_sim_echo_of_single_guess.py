"""Attack: offer one candidate at a time, so a counterpart that repeats the question names it.

An answer reveals a hidden value when it names it and no look-alike
(``gymforge.world.reveal``), so an echo of "Jane Doe or Jane Smith?" settles nothing. But
an agent facing two contacts named Jane can ask about each in turn ("Do you mean Jane
Doe?", then "Do you mean Jane Smith?"): a requester model that repeats the question back
names one candidate each time, and the question about the meant one "reveals" it. The
clarification is counted (``clarified``, ``clarify_before_acting`` kept, +0.1 ``clarify``)
though the requester chose nothing. The same holds for a customer asked "is your ZIP
48213?". Success would be any reveal from an answer that merely repeats the question. The
defence: an answer that holds the whole of a message that named the value (its words, in
order), or names the value only amid words copied from around it there (an echo cut short),
reveals nothing; an answer of its own that names the value still does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext
from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.qa.episodes import play
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing.openai_server.server import OpenAITestServer
from gymforge.world.attacks import PlanAttack
from gymforge.world.sim import Persona, PolicyUser, Slot

BASE = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
TID = CrmEnv.tasks.families["crm.update_contact"].variant_id({**BASE, "ambiguous": 1}, 2)


def _one_at_a_time(task: Task, plan: list[Action]) -> list[Action]:
    t = CrmEnv().truth_of(task)
    rows = {r["id"]: r for r in t.world["contacts"]}
    names = [
        f"{rows[rid]['first_name']} {rows[rid]['last_name']}"
        for meant, twin in t.decoys.items()
        for rid in (twin, meant)
    ]
    out: list[Action] = []
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "ask_requester":
            out += [
                ToolCall(name="ask_requester", arguments={"question": f"Do you mean {n}?"})
                for n in names
            ]
        else:
            out.append(a)
    return out


@pytest.fixture(scope="module")
def parrot() -> Iterator[OpenAITestServer]:
    """A model that answers with the question it was asked ("echo: ...")."""
    with OpenAITestServer() as srv:
        yield srv


def test_a_requester_repeating_each_single_guess_clarifies_nothing(
    parrot: OpenAITestServer,
) -> None:
    factory = OpenAIPolicyFactory("requester", base_url=parrot.base_url)

    async def go() -> list[dict[str, Any]]:
        env = CrmEnv(user_policy=factory)
        try:
            return await play(env, PlanAttack(_one_at_a_time), TID, 0)
        finally:
            await env.close()
            await factory.aclose()

    records = asyncio.run(go())
    info = records[-2]["info"]
    clarify = sum(r["reward_components"].get("clarify", 0.0) for r in records[1:-1])
    assert clarify == 0.0
    assert info["verdict"]["facts"]["clarified"] is False


PERSONA = Persona("Dana Smith", "polite", "I was charged twice.", (Slot("zip", "48213", ("zip",)),))


@pytest.mark.parametrize(
    ("answer", "revealed"),
    [
        ("Is your ZIP code 48213?", []),
        ("echo: is your zip code 48213", []),
        ("Yes, 48213.", ["zip"]),
        ("Yes, my ZIP code is 48213.", ["zip"]),
    ],
)
def test_a_customer_repeating_a_single_guess_reveals_nothing(
    answer: str, revealed: list[str]
) -> None:
    assert _revealed("Is your ZIP code 48213?", answer) == revealed


LONG = "Is your ZIP code 48213? I ask because the records need to be up to date today."
FIRST = "48213: is that your ZIP code? The records need to be up to date."


@pytest.mark.parametrize(
    ("answer", "revealed"),
    [
        ("echo: Is your ZIP code 48213? I ask because the", []),  # cut by its max_tokens
        ("Yes, 48213 is right.", ["zip"]),
        ("48213", ["zip"]),
        ("ZIP 48213, yes.", ["zip"]),
        ("Yes, my ZIP code 48213 is the one on file.", ["zip"]),  # one side borrowed
    ],
)
def test_a_customer_repeating_part_of_a_guess_reveals_nothing(
    answer: str, revealed: list[str]
) -> None:
    assert _revealed(LONG, answer) == revealed


@pytest.mark.parametrize(
    ("answer", "revealed"),
    [("Echo: 48213: is that your", []), ("Yes, 48213.", ["zip"]), ("48213, yes it is.", ["zip"])],
)
def test_a_guess_at_the_start_of_the_question_echoed_reveals_nothing(
    answer: str, revealed: list[str]
) -> None:
    assert _revealed(FIRST, answer) == revealed


@pytest.mark.parametrize("question", ["ZIP?", "Your ZIP code?", "What is your ZIP code?"])
def test_an_answer_repeating_a_question_without_the_value_reveals_it(question: str) -> None:
    assert _revealed(question, f"{question} It is 48213.") == ["zip"]


def _revealed(question: str, answer: str) -> list[str]:
    user = PolicyUser(Says(answer), PERSONA)

    async def go() -> Any:
        await user.start(EpisodeContext("t", 0))
        return await user.respond(question)

    turn = asyncio.run(go())
    return [e[1]["slot"] for e in turn.events if e[0] == "reveal"]
