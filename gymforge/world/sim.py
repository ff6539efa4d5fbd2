"""User simulators: the other side of a support conversation.

``ScriptedUser`` is deterministic and seeded. It holds a ``Persona`` (who they are, what
they want, in what tone) and a set of ``Slot`` facts it reveals only when the agent asks
for them (by keyword). Asked to confirm an action, in a message that asks for nothing else,
it says yes. Its stop condition is checkable: ``stop_reason`` is ``None`` while it is still
talking and ``"patience_exhausted"`` or ``"max_turns"`` once it gave up; the environment adds
its own condition (the case was closed) through ``WorldToolEnv.user_stop``.

``PolicyUser`` puts any ``Policy`` (an LLM behind an OpenAI-compatible server, say) behind
the same interface (``world.counterpart.Counterpart``). Its reveals and confirmations are
read off its replies: a reply reveals a fact when it names its value as a whole, no other
candidate of that shape the agent offered, and not as a mere echo of an agent message that
named it (``world.reveal``: an echo of "is your ZIP 48213 or 48214?", or of "is it 48213?",
reveals nothing); a yes confirms only a message that asks for nothing else (``asks_consent``, the
scripted user's rule), and only a yes of the reply's own, not the agent's repeated
(``consents``). It stops when it writes ``###STOP###``, or hangs up when its
model cannot go on with the agent's text (``"context_length"``, ``"refused"``,
``"timed_out"``: ``Counterpart``), so the episode is judged, never dropped and never the
end of the run.

Every turn returns ``UserTurn.events``; the environment logs them as ``user.reveal`` and
``user.confirm`` so process rules can require a confirmation before each write.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from gymforge.core.policy import EpisodeContext, Policy
from gymforge.world.counterpart import Counterpart
from gymforge.world.reveal import fold, offered, opens_copied, repeats, reveals

Tone = Literal["polite", "terse", "upset"]
CONFIRM_WORDS = (
    "confirm",
    "proceed",
    "go ahead",
    "shall i",
    "should i",
    "do you agree",
    "is that ok",
    "okay to",
    "ok to",
    "may i",
)
YES = re.compile(r"^\W*(yes|yeah|yep|sure|ok|okay|please do|go ahead|i confirm|confirmed)\b", re.I)
STOP_MARK = "###STOP###"


@dataclass(frozen=True)
class Slot:
    """A fact the user reveals only when a message contains one of ``keywords``. ``say`` is
    how the scripted user phrases it (it must contain ``value``)."""

    name: str
    value: str
    keywords: tuple[str, ...]
    say: str = ""

    @property
    def text(self) -> str:
        return self.say or self.value


@dataclass(frozen=True)
class Persona:
    name: str
    tone: Tone
    opening: str
    slots: tuple[Slot, ...] = ()
    nudge: str = "Can you help me with my request?"
    patience: int = 4
    max_turns: int = 14
    confirms: bool = True

    def instructions(self) -> str:
        """The persona as a prompt, for an LLM-driven user."""
        facts = "\n".join(f"- {s.name}: {s.value}" for s in self.slots)
        consent = "answer yes" if self.confirms else "say no: you approve no change"
        return (
            f"You are {self.name}, a customer talking to a support agent; you are {self.tone}.\n"
            f"Your request: {self.opening}\nFacts you know. Reveal each one only when the "
            f"agent asks for it:\n{facts}\nWhen the agent asks you to confirm an action, "
            f"{consent}. When your request has been handled, end your message with "
            f"{STOP_MARK}."
        )


@dataclass(frozen=True)
class UserTurn:
    text: str
    events: tuple[tuple[str, dict[str, Any]], ...] = ()
    stop: str | None = None


class UserSimulator(Protocol):
    stop_reason: str | None

    async def start(self, ctx: EpisodeContext) -> None: ...

    async def respond(self, text: str) -> UserTurn: ...

    def state(self) -> dict[str, Any]: ...


def asks_confirmation(text: str) -> bool:
    """Whether ``text``, read folded (``world.reveal.fold``), has a confirmation word."""
    low = fold(text)
    return any(w in low for w in CONFIRM_WORDS)


def asked_slots(persona: Persona, text: str) -> list[Slot]:
    """The slots whose keywords ``text``, read folded (``world.reveal.fold``), has: a "zip"
    with a zero-width space inside or in full-width letters asks for the ZIP as any reader
    sees."""
    low = fold(text)
    return [s for s in persona.slots if any(fold(k) in low for k in s.keywords)]


def asks_consent(persona: Persona, text: str) -> bool:
    """Whether ``text`` asks ``persona`` to confirm an action and for nothing else: "confirm
    your email" asks for a fact, and no yes to it approves a change. Both simulators
    confirm by this rule (the LLM one when its reply begins with a yes)."""
    return persona.confirms and asks_confirmation(text) and not asked_slots(persona, text)


def consents(reply: str, text: str) -> bool:
    """Whether ``reply`` says yes to ``text`` of its own: it begins with a yes that is not the
    agent's, repeated (the whole message, ``world.reveal.repeats``, or its words at the
    reply's opening, ``world.reveal.opens_copied``: an echo of "OK, I will now refund ...").
    """
    return bool(YES.match(reply)) and not repeats(reply, text) and not opens_copied(reply, text)


_YES = {
    "polite": ("Yes, please go ahead.", "Yes, I confirm. Thank you."),
    "terse": ("Yes.", "Confirmed."),
    "upset": ("Yes, just do it.", "Yes. Go ahead."),
}
_LOST = {
    "polite": "Sorry, I'm not sure what you need from me.",
    "terse": "Not sure what you mean.",
    "upset": "I don't understand what you're asking.",
}
_BYE = "I've spent long enough on this. Goodbye."


@dataclass
class ScriptedUser:
    """The deterministic simulator. All phrasing choices come from the seeded ``r``."""

    persona: Persona
    r: random.Random
    revealed: list[str] = field(default_factory=list)
    confirmations: int = 0
    turns: int = 0
    unproductive: int = 0
    stop_reason: str | None = None

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def respond(self, text: str) -> UserTurn:
        p = self.persona
        self.turns += 1
        slots = asked_slots(p, text)
        parts: list[str] = []
        events: list[tuple[str, dict[str, Any]]] = []
        for s in slots:
            parts.append(s.text)
            events.append(("reveal", {"slot": s.name}))
            if s.name not in self.revealed:
                self.revealed.append(s.name)
        if asks_consent(p, text):
            parts.append(self.r.choice(_YES[p.tone]))
            events.append(("confirm", {}))
            self.confirmations += 1
        if parts:
            self.unproductive = 0
        else:
            self.unproductive += 1
            parts = [_LOST[p.tone], p.nudge]
        if self.unproductive >= p.patience:
            self.stop_reason = "patience_exhausted"
        elif self.turns >= p.max_turns:
            self.stop_reason = "max_turns"
        if self.stop_reason is not None:
            return UserTurn(_BYE, tuple(events), self.stop_reason)
        return UserTurn(" ".join(parts), tuple(events))

    def state(self) -> dict[str, Any]:
        return {
            "revealed": list(self.revealed),
            "confirmations": self.confirmations,
            "turns": self.turns,
            "stop_reason": self.stop_reason,
        }


class PolicyUser:
    """A user simulator driven by ``policy`` (for instance an LLM). The policy receives the
    persona as a system message, then each agent message as a user message, and answers
    with ``Reply`` actions."""

    def __init__(self, policy: Policy, persona: Persona) -> None:
        self.policy, self.persona = policy, persona
        self.model = Counterpart(policy, persona.instructions())
        self.stop_reason: str | None = None
        self.turns = 0
        self.confirmations = 0
        self.revealed: list[str] = []

    async def start(self, ctx: EpisodeContext) -> None:
        await self.model.start(ctx)

    async def respond(self, text: str) -> UserTurn:
        self.turns += 1
        heard = await self.model.hear(text)
        if heard.stop is not None:  # its model cannot go on with the agent's text: it hangs up
            self.stop_reason = heard.stop
            return UserTurn(_BYE, (), self.stop_reason)
        reply = heard.text
        events: list[tuple[str, dict[str, Any]]] = []
        for s in self.persona.slots:
            if reveals(reply, s.value, offered(s.value, text), asked=text):
                events.append(("reveal", {"slot": s.name}))
                if s.name not in self.revealed:
                    self.revealed.append(s.name)
        if asks_consent(self.persona, text) and consents(reply, text):
            events.append(("confirm", {}))
            self.confirmations += 1
        if STOP_MARK in reply:
            self.stop_reason = "user_stop"
        elif self.turns >= self.persona.max_turns:
            self.stop_reason = "max_turns"
        return UserTurn(reply.replace(STOP_MARK, "").strip(), tuple(events), self.stop_reason)

    def state(self) -> dict[str, Any]:
        return {
            "revealed": list(self.revealed),
            "confirmations": self.confirmations,
            "turns": self.turns,
            "stop_reason": self.stop_reason,
        }
