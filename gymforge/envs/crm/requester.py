"""The requester: the colleague behind a CRM request, who answers ``ask_requester``.

``ScriptedRequester`` is deterministic: a question that contains one of a clarification's
keywords gets that clarification (``gymforge.world.sim.asked_slots``); any other question
gets a polite "not sure what you are asking" and the request again; on a clear request
every question gets "everything you need is in my request".

``PolicyRequester`` puts any ``Policy`` (an LLM behind an OpenAI-compatible server, say)
in the requester's place: it receives the request and the hidden intent as a system
message, then each question as a user message, and answers with a ``Reply``. A
clarification counts as revealed when the answer names its value, no look-alike's, and not
as an echo of the question (``gymforge.world.reveal``).

Both return ``(answer, revealed clarification names)``; whether a question was needless is
the environment's to judge, from the task (``CrmTruth.ambiguous``), never the answer's.
"""

from __future__ import annotations

from typing import Protocol

from gymforge.core.policy import EpisodeContext, Policy
from gymforge.envs.crm.truth import CrmTruth
from gymforge.world.counterpart import Counterpart
from gymforge.world.reveal import offered, reveals
from gymforge.world.sim import Persona, Slot, asked_slots

MAX_QUESTION = 2000
NO_ANSWER = "Sorry, I cannot take any more questions."


class Requester(Protocol):
    async def start(self, ctx: EpisodeContext) -> None: ...

    async def answer(self, question: str) -> tuple[str, list[str]]: ...


def clear_answer(truth: CrmTruth) -> str:
    return f"Everything you need is in my request: {truth.requester}"


class ScriptedRequester:
    def __init__(self, truth: CrmTruth) -> None:
        self.truth = truth
        slots = tuple(Slot(c.name, c.value, tuple(c.keywords), c.say) for c in truth.clarify)
        self.persona = Persona("requester", "polite", truth.requester, slots)

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def answer(self, question: str) -> tuple[str, list[str]]:
        if not self.truth.ambiguous:
            return clear_answer(self.truth), []
        hits = asked_slots(self.persona, question[:MAX_QUESTION])
        if not hits:
            return "Sorry, I'm not sure what you are asking. " + self.truth.requester, []
        return " ".join(s.text for s in hits), [s.name for s in hits]


def instructions(truth: CrmTruth) -> str:
    """The requester as a prompt, for an LLM-driven requester."""
    if truth.clarify:
        meant = "\n".join(f"- {c.name}: {c.value}" for c in truth.clarify)
        intent = f"What you meant, which your request does not say:\n{meant}\n"
    else:
        intent = "Your request says everything that is needed.\n"
    return (
        "You are a sales colleague who asked an assistant to change the CRM. Your request: "
        f"{truth.requester}\n{intent}The assistant may ask you questions. Answer briefly "
        "and truthfully from what you meant; do not volunteer anything it did not ask for."
    )


def look_alikes(truth: CrmTruth) -> list[str]:
    """The names of the records an ambiguous request could mean but does not (``decoys``),
    as the CRM shows them: a contact's full name, an opportunity's name."""
    rows = {r["id"]: r for t in ("contacts", "opportunities") for r in truth.world.get(t, [])}
    out = []
    for rid in sorted(truth.decoys.values()):
        row = rows.get(rid)
        if row is not None:
            name = row["name"] if "name" in row else f"{row['first_name']} {row['last_name']}"
            out.append(str(name))
    return out


class PolicyRequester:
    """A clarification is revealed when the answer names its value and no look-alike (a
    record the request could mean, or a candidate of the value's shape the question
    offered: another email) and does not merely echo the question
    (``gymforge.world.reveal``): an answer that names
    every candidate (a requester repeating "Jane Doe or Jane Smith?", or not sure which),
    or repeats "Do you mean Jane Doe?", settles nothing, however it was asked for. A
    requester whose model cannot go on with the agent's questions (its context full of
    them, a refusal of their text, a turn they stretched past the timeout:
    ``gymforge.world.counterpart``) answers nothing from then on."""

    def __init__(self, policy: Policy, truth: CrmTruth) -> None:
        self.policy, self.truth = policy, truth
        self.model = Counterpart(policy, instructions(truth))
        self.others = look_alikes(truth)

    async def start(self, ctx: EpisodeContext) -> None:
        await self.model.start(ctx)

    async def answer(self, question: str) -> tuple[str, list[str]]:
        asked = question[:MAX_QUESTION]
        heard = await self.model.hear(asked)
        if heard.stop is not None:
            return NO_ANSWER, []
        reply, meant = heard.text, self.truth.clarify
        return reply, [
            c.name
            for c in meant
            if reveals(reply, c.value, [*self.others, *offered(c.value, asked)], asked)
        ]
