"""The user simulators: reveal on ask, confirmations, a checkable stop condition, the
Policy hook, determinism."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from gymforge.core import Observation, Reply
from gymforge.core.errors import TurnTimedOut
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedError
from gymforge.world import PolicyUser, ScriptedUser
from gymforge.world.counterpart import REFUSED, TIMED_OUT, Counterpart
from gymforge.world.sim import Persona, Slot

PERSONA = Persona(
    name="Dana Smith",
    tone="polite",
    opening="I was charged twice.",
    slots=(
        Slot("email", "dana@mail.example", ("email",), "My email is dana@mail.example."),
        Slot("zip", "12345", ("zip", "postal"), "My ZIP code is 12345."),
    ),
    nudge="Please refund the duplicate charge.",
    patience=3,
    max_turns=6,
)


def say(user: ScriptedUser | PolicyUser, text: str):  # type: ignore[no-untyped-def]
    return asyncio.run(user.respond(text))


def test_reveals_only_what_is_asked() -> None:
    user = ScriptedUser(PERSONA, random.Random(0))
    assert "dana@mail.example" not in PERSONA.opening
    turn = say(user, "What is the email address on the account?")
    assert "dana@mail.example" in turn.text and "12345" not in turn.text
    assert turn.events == (("reveal", {"slot": "email"}),)
    turn = say(user, "And your ZIP code?")
    assert "12345" in turn.text and user.state()["revealed"] == ["email", "zip"]


def test_confirms_a_change_but_not_a_question_about_a_fact() -> None:
    user = ScriptedUser(PERSONA, random.Random(0))
    turn = say(user, "I will refund 20.00 USD to your card. Do you confirm?")
    assert turn.events == (("confirm", {}),) and turn.text.startswith("Yes")
    turn = say(user, "Can you confirm your email?")  # a question, not a change to approve
    assert turn.events == (("reveal", {"slot": "email"}),)
    assert user.confirmations == 1


def test_stop_condition_patience_then_max_turns() -> None:
    user = ScriptedUser(PERSONA, random.Random(0))
    for _ in range(2):
        turn = say(user, "Hello!")
        assert turn.stop is None and PERSONA.nudge in turn.text
    turn = say(user, "Hello!")
    assert turn.stop == "patience_exhausted" == user.stop_reason
    patient = ScriptedUser(PERSONA, random.Random(0))
    stops = [say(patient, "Your email, please?").stop for _ in range(6)]
    assert stops == [None] * 5 + ["max_turns"]  # productive turns never exhaust patience


def test_scripted_user_is_deterministic_per_seed() -> None:
    def transcript(seed: int) -> list[str]:
        user = ScriptedUser(Persona("A", "terse", "x", confirms=True), random.Random(seed))
        return [say(user, "Shall I proceed?").text for _ in range(5)]

    assert transcript(1) == transcript(1)
    assert len({tuple(transcript(s)) for s in range(6)}) > 1


class CannedCustomer:
    """Stands in for an LLM behind the Policy interface."""

    name = checkpoint = "canned"

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.seen = list(replies), []

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx

    async def act(self, observation: Observation) -> PolicyTurn:
        self.seen.append(observation)
        return PolicyTurn(Reply(text=self.replies.pop(0)))


def test_policy_user_goes_through_the_policy_interface() -> None:
    policy = CannedCustomer(
        ["Sure, it's dana@mail.example.", "Yes, go ahead.", "Thanks! ###STOP###"]
    )
    user = PolicyUser(policy, PERSONA)
    asyncio.run(user.start(EpisodeContext("t", 0)))
    first = say(user, "What is your email?")
    assert first.events == (("reveal", {"slot": "email"}),)
    assert (
        policy.seen[0].messages[0].role == "system"
        and "Dana Smith" in policy.seen[0].messages[0].content
    )
    assert say(user, "I will refund it. Do you confirm?").events == (("confirm", {}),)
    last = say(user, "Done, anything else?")
    assert last.stop == "user_stop" and last.text == "Thanks!"
    assert len(policy.seen[1].messages) == 1  # only the new message after the first turn


def test_a_policy_user_that_confirms_nothing_is_told_so_and_never_counted() -> None:
    persona = Persona("Lee", "terse", "Refund me.", confirms=False)
    policy = CannedCustomer(["Yes, go ahead."])
    user = PolicyUser(policy, persona)
    asyncio.run(user.start(EpisodeContext("t", 0)))
    assert say(user, "I will refund it. Do you confirm?").events == ()
    assert "say no" in policy.seen[0].messages[0].content and user.confirmations == 0


def test_a_stall_already_seen_answering_needs_no_probe() -> None:
    """A counterpart turn whose policy saw the server answer while it waited
    (``TurnTimedOut.answering``) is the agent's outcome at once: no probe is sent."""

    class Stretched:
        name = "stretched"

        def __init__(self) -> None:
            self.asked: list[Observation] = []

        async def start(self, ctx: EpisodeContext) -> None:
            pass

        async def act(self, observation: Observation) -> PolicyTurn:
            self.asked.append(observation)
            err = TurnTimedOut("every attempt ran past the call timeout")
            err.answering = True
            raise err

    policy = Stretched()
    model = Counterpart(policy, "You are a customer.")

    async def go() -> tuple[str | None, str | None]:
        await model.start(EpisodeContext("t", 0))
        first = await model.hear("a very long message")
        second = await model.hear("anything")
        return first.stop, second.stop

    assert asyncio.run(go()) == (TIMED_OUT, TIMED_OUT)
    assert len(policy.asked) == 1  # neither a probe nor a second turn


def test_a_server_policy_that_judged_a_refusal_itself_hangs_up_refused() -> None:
    """A counterpart behind a real server policy: the agent's later message is refused, the
    policy's own probe (its first request) is answered, so it raises ``TranscriptRefused``;
    the counterpart hangs up ``refused``, as for a refusal it probed itself."""
    trigger = "<<refused words>>"

    def moderated(request: dict[str, Any]) -> str:
        if trigger in json.dumps(request.get("messages")):
            raise ServedError(400, "Request blocked by guardrail")
        return "I see."

    async def go(base_url: str) -> list[str | None]:
        factory = OpenAIPolicyFactory("m", base_url=base_url)
        try:
            model = Counterpart(factory(), "You are a customer.")
            await model.start(EpisodeContext("t", 0))
            heard = [await model.hear("hello"), await model.hear(trigger)]
            heard.append(await model.hear("anything"))
            return [h.stop for h in heard]
        finally:
            await factory.aclose()

    with OpenAITestServer(moderated) as srv:
        assert asyncio.run(go(srv.base_url)) == [None, REFUSED, REFUSED]
        assert [r.get("max_tokens") for r in srv.requests] == [None, None, 1]
