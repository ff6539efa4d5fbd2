"""Attack: ask for a fact in words the consent rule does not read, and bank the yes as consent.

A yes confirms a change only when the message asked for nothing else
(``world.sim.asks_consent``): "please confirm your ZIP code" names the ``zip`` slot's
keyword, so it is a question and no yes to it approves the refund that follows. The
keywords were looked for in the raw text, lower-cased: an agent writing "z\\u200bip" (a
zero-width space inside), "ZIP" with a Cyrillic I or in full-width letters asks the same
question of any reader, but the rule saw none of the slot's keywords, so the scripted
customer's yes, or the LLM customer's "Yes, it's 48213", was banked as ``user.confirm``.
Success would be a confirmation event for a message that asks for one of the customer's
facts however it is spelled. The defence: the rule reads the message folded
(``world.reveal.fold``), as the reveal rule does.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext
from gymforge.world.sim import Persona, PolicyUser, ScriptedUser, Slot, asks_consent

PERSONA = Persona(
    "Dana Smith",
    "polite",
    "I was charged twice.",
    (Slot("zip", "48213", ("zip",)),),
)
SPELLINGS = {
    "zero-width": "z\u200bip",
    "soft-hyphen": "z\u00adip",
    "cyrillic-i": "Z\u0406P",
    "full-width": "\uff3a\uff29\uff30",
}


def _confirmed(user: Any, text: str) -> bool:
    async def go() -> Any:
        await user.start(EpisodeContext("t", 0))
        return await user.respond(text)

    return any(e[0] == "confirm" for e in asyncio.run(go()).events)


@pytest.mark.parametrize("zip_word", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_a_question_for_a_fact_however_spelled_asks_no_consent(zip_word: str) -> None:
    text = f"Please confirm your {zip_word} code."
    assert not asks_consent(PERSONA, text)
    assert not _confirmed(PolicyUser(Says("Yes, it's 48213."), PERSONA), text)  # type: ignore[arg-type]
    assert not _confirmed(ScriptedUser(PERSONA, random.Random(0)), text)


def test_a_plain_request_for_consent_still_asks_it() -> None:
    text = "Shall I refund the duplicate charge? Please confirm."
    assert asks_consent(PERSONA, text)
    assert _confirmed(PolicyUser(Says("Yes, go ahead."), PERSONA), text)  # type: ignore[arg-type]
    assert _confirmed(ScriptedUser(PERSONA, random.Random(0)), text)
