"""Attack: have an LLM customer that repeats the agent's message give its consent.

The LLM customer (``world.sim.PolicyUser``) confirms a change when the agent's message asks
for consent and nothing else (``asks_consent``) and its reply begins with a yes ("yes",
"ok", "sure", "go ahead", ...). The reply was read for that yes only: a counterpart that
repeats the agent's message back (as ``world.reveal`` guards against for reveals) says
"yes" whenever the agent's message itself begins with one. An agent writes "OK, I will now
refund the duplicate charge of 20.00. Please confirm." and a parrot customer's echo of it
is banked as ``user.confirm``, though the customer approved nothing. Success would be a
confirmation event for a reply that merely repeats the agent's message, whole or cut
short. The defence: a yes that is the agent's own (the whole message repeated, or the
reply's opening words copied from the message) confirms nothing; a yes of the customer's
own still does.
"""

from __future__ import annotations

import asyncio

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply
from gymforge.world.sim import Persona, PolicyUser, Slot

PERSONA = Persona(
    "Dana Smith",
    "polite",
    "I was charged twice.",
    (Slot("zip", "48213", ("zip",)),),
)
ASK = "OK, I will now refund the duplicate charge of 20.00. Please confirm."


class Repeats:
    """A customer model that answers with the agent's last message, cut to ``words``."""

    name = checkpoint = "repeats"

    def __init__(self, words: int | None = None, prefix: str = "") -> None:
        self.words, self.prefix = words, prefix

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        last = observation.messages[-1].content
        cut = " ".join(last.split()[: self.words]) if self.words else last
        return PolicyTurn(Reply(text=self.prefix + cut))


def _confirms(model: object, question: str) -> bool:
    user = PolicyUser(model, PERSONA)  # type: ignore[arg-type]

    async def go() -> bool:
        await user.start(EpisodeContext("t", 0))
        turn = await user.respond(question)
        return any(e[0] == "confirm" for e in turn.events)

    return asyncio.run(go())


@pytest.mark.parametrize(
    "model",
    [Repeats(), Repeats(words=8), Repeats(prefix="  "), Repeats(words=5, prefix='"')],
    ids=["whole", "cut", "spaced", "quoted-cut"],
)
def test_an_echo_of_a_message_beginning_with_ok_is_no_consent(model: Repeats) -> None:
    assert not _confirms(model, ASK)
    assert not _confirms(model, "Sure thing: shall I go ahead and refund 20.00? Please confirm.")


@pytest.mark.parametrize(
    "reply",
    ["Yes, please go ahead.", "OK.", "Yes.", "Sure, refund the duplicate charge please."],
)
def test_a_yes_of_the_customers_own_confirms(reply: str) -> None:
    assert _confirms(Says(reply), ASK)
    assert _confirms(Says(reply), "Shall I refund the duplicate charge of 20.00? Please confirm.")
