"""Attack: write the guessed value so the echo rule does not see it, and let the echo reveal it.

An answer naming a hidden value reveals it (``user.reveal``, a crm clarification) unless it
merely echoes an agent message that named it (``world.reveal.echoes``). Which message
"named" the value, and which answer words were "copied", were read from the raw text: the
value matched by a case-insensitive regex, the words compared lower-cased. An agent that
guesses the value writes it so the rule does not see it in its message while a model
repeating the message says it plainly: a zero-width space or a soft hyphen inside it, a
no-break or double space between its words, a Cyrillic look-alike letter, full-width
digits, a long s (U+017F, which the regex's case folding equates with ``s`` but lower-casing
does not). A counterpart repeating it (as models clean text up), or repeating only the start
of the message ("Is your ZIP 48213? I ask"), then "reveals" the guess though it chose
nothing. Success would be a reveal event for any such echo. The defence: every comparison
reads the texts folded one way (NFKC, format characters dropped, case folded, look-alike
letters mapped, spaces collapsed), and an echo cut at the answer's edge is still an echo
when the rest of it is copied; an answer of its own still reveals.
"""

from __future__ import annotations

import asyncio
import unicodedata
from typing import Any

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply
from gymforge.world.sim import Persona, PolicyUser, Slot

PERSONA = Persona(
    "Dana Smith",
    "polite",
    "I was charged twice.",
    (
        Slot("zip", "48213", ("zip",)),
        Slot("contact", "Jane Smith", ("contact",)),
        Slot("email", "dana.smith7@mail.example", ("email",)),
    ),
)
_LATIN = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0455\u0458\u0501\u03bf\u03b1",
    "aeopcyxisjdoa",
)


def _clean(text: str) -> str:
    """How a model repeating a text may write it: compatibility forms, no format
    characters, look-alike letters as Latin, single spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.translate(_LATIN).split())


class Repeats:
    """A counterpart model that answers with the agent's last message, cleaned or cut."""

    name = checkpoint = "repeats"

    def __init__(self, clean: bool, words: int | None = None) -> None:
        self.clean, self.words = clean, words

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        text = observation.messages[-1].content
        text = _clean(text) if self.clean else text
        if self.words is not None:
            text = " ".join(text.split()[: self.words])
        return PolicyTurn(Reply(text=text))


def _revealed(model: Any, question: str) -> list[str]:
    user = PolicyUser(model, PERSONA)

    async def go() -> Any:
        await user.start(EpisodeContext("t", 0))
        return await user.respond(question)

    turn = asyncio.run(go())
    return [e[1]["slot"] for e in turn.events if e[0] == "reveal"]


TAIL = " I ask because we have two on file."
DISGUISED = {
    "zero-width": "Is your ZIP 482\u200b13?",
    "soft-hyphen": "Is your ZIP 482\u00ad13?",
    "full-width": "Is your ZIP \uff14\uff18\uff12\uff11\uff13?",
    "no-break-space": "Do you mean Jane\u00a0Smith?",
    "double-space": "Do you mean Jane  Smith?",
    "cyrillic": "Do you mean Jane Smith?".replace("a", "\u0430"),
    "long-s": "Do you mean Jane \u017fmith?",
    "email-cyrillic": "Is your email dana.smith7@m\u0430il.example?",
}


@pytest.mark.parametrize("question", DISGUISED.values(), ids=DISGUISED.keys())
@pytest.mark.parametrize("words", [None, 5, 6], ids=["whole", "cut5", "cut6"])
def test_a_cleaned_echo_of_a_disguised_guess_reveals_nothing(
    question: str, words: int | None
) -> None:
    assert _revealed(Repeats(clean=True, words=words), question + TAIL) == []


@pytest.mark.parametrize("question", DISGUISED.values(), ids=DISGUISED.keys())
def test_a_verbatim_cut_echo_of_a_disguised_guess_reveals_nothing(question: str) -> None:
    assert _revealed(Repeats(clean=False, words=6), question + TAIL) == []


@pytest.mark.parametrize("words", [4, 5, 6, 7])
def test_an_echo_cut_at_the_answers_end_reveals_nothing(words: int) -> None:
    assert _revealed(Repeats(clean=False, words=words), "Is your ZIP 48213?" + TAIL) == []


@pytest.mark.parametrize(
    ("question", "answer", "revealed"),
    [
        ("Is your ZIP 48213?" + TAIL, "Yes, 48213 is right.", ["zip"]),
        ("Is your ZIP 48213?" + TAIL, "ZIP 48213", ["zip"]),
        ("Is your ZIP 48213?" + TAIL, "48213", ["zip"]),
        ("What is your ZIP?", "It is \uff14\uff18\uff12\uff11\uff13.", ["zip"]),
        ("Do you mean Jane\u00a0Smith?" + TAIL, "Yes, Jane Smith, the VP.", ["contact"]),
        ("Which contact?", "Jane  Smith", ["contact"]),
        ("Is your ZIP 48213 or 4821\u200b4?", "It's 48213 or 48214, not sure.", []),
    ],
)
def test_an_answer_of_its_own_still_reveals(
    question: str, answer: str, revealed: list[str]
) -> None:
    assert _revealed(Says(answer), question) == revealed
