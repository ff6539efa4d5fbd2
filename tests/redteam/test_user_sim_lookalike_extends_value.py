"""Attack: offer a look-alike that holds the value and more, which the look-alike rule misses.

An answer reveals a hidden value when it names it and none of the look-alikes the agent's
message offered (``world.reveal``): "is your ZIP 48213 or 48214?" answered "48213 or 48214,
not sure" reveals nothing. A value was "named" wherever it stood between two non-word
characters, and a look-alike was found by the value's shape: so a candidate that extends
the value past a dot, an ``@`` or a hyphen ("dana.smith7@mail.example.com" beside
"dana.smith7@mail.example", "mail.dana.smith7@mail.example") both named the value and was
no candidate of its shape. An agent offering the value and such an extension, to a
customer unsure which ("dana.smith7@mail.example or dana.smith7@mail.example.com, I
think"), had the value revealed though the customer chose nothing. Success would be a
reveal event for such an answer. The defence: an answer in which the value runs on into a
longer address, name or number (a dot, ``@``, ``+`` or hyphen joined to more word characters
on either side) names a look-alike and reveals nothing; a full stop after it still ends it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext
from gymforge.world.sim import Persona, PolicyUser, Slot

EMAIL = "dana.smith7@mail.example"
PERSONA = Persona(
    "Dana Smith",
    "polite",
    "I was charged twice.",
    (Slot("email", EMAIL, ("email",)), Slot("contact", "Jane Lee", ("contact",))),
)


def _revealed(question: str, answer: str) -> list[str]:
    user = PolicyUser(Says(answer), PERSONA)  # type: ignore[arg-type]

    async def go() -> Any:
        await user.start(EpisodeContext("t", 0))
        return await user.respond(question)

    turn = asyncio.run(go())
    return [e[1]["slot"] for e in turn.events if e[0] == "reveal"]


@pytest.mark.parametrize("other", [f"{EMAIL}.com", f"mail.{EMAIL}", f"{EMAIL}-old", "x+" + EMAIL])
def test_an_unsure_answer_naming_an_extension_of_the_value_reveals_nothing(other: str) -> None:
    question = f"Is your email {EMAIL} or {other}?"
    assert _revealed(question, f"Not sure: {EMAIL} or {other}, I think.") == []
    assert _revealed(question, f"Not sure: {other} or {EMAIL}.") == []


@pytest.mark.parametrize(
    ("answer", "revealed"),
    [
        (f"It is {EMAIL}.", ["email"]),
        (f"It is {EMAIL}, thanks", ["email"]),
        (f"({EMAIL})", ["email"]),
        (f"It is {EMAIL}.com", []),
        ("Jane Lee-Smith", []),
        ("Jane Lee.", ["contact"]),
    ],
)
def test_an_answer_reveals_a_value_where_it_ends(answer: str, revealed: list[str]) -> None:
    assert _revealed("What is your email, and the contact's name?", answer) == revealed
