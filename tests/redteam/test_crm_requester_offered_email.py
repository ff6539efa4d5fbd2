"""Attack: offer the requester two emails and have its unsure answer clarify the meant one.

An ambiguous ``crm.create_contact`` request ("Please add Jane Doe, VP of Sales, as a contact
at Acme") leaves the contact's email to clarify (``ask_requester``: ``clarified``, +0.1
``clarify``, ``clarify_before_acting`` kept). An LLM requester's answer clarifies a value
when it names it and no look-alike (``world.reveal``), but the requester's look-alikes were
only the records the request could mean (names): another email the agent's question
offered was none. An agent with the email from elsewhere (the contact's existing record)
asks "Is it jane.doe@acme.example or jane.doe2@acme.example?", and a requester unsure which
("jane.doe@acme.example or jane.doe2@acme.example, I am not sure") had the email clarified
though it chose nothing, as a customer's ZIP no longer is. Success would be a clarification
for such an answer. The defence: the requester's look-alikes include the candidates of the
value's shape the question offered (``world.reveal.offered``), as the customer's do.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from counterparts import Says

from gymforge.core.policy import EpisodeContext
from gymforge.envs.crm import CrmEnv
from gymforge.envs.crm.requester import PolicyRequester

BASE = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
FAMILY = CrmEnv.tasks.families["crm.create_contact"]
TIDS = [FAMILY.variant_id({**BASE, "ambiguous": 1, "exists": e}, 1) for e in (0, 1)]


def _email(tid: str) -> tuple[Any, str]:
    truth = CrmEnv().truth_of(CrmEnv.tasks.resolve(tid))
    (email,) = [c.value for c in truth.clarify if c.name == "email"]
    return truth, email


def _other(email: str) -> str:
    local, domain = email.split("@")
    return f"{local}2@{domain}"


def _clarified(tid: str, question: str, answer: str) -> list[str]:
    truth, _ = _email(tid)
    requester = PolicyRequester(Says(answer), truth)  # type: ignore[arg-type]

    async def go() -> list[str]:
        await requester.start(EpisodeContext(tid, 0))
        return (await requester.answer(question))[1]

    return asyncio.run(go())


@pytest.mark.parametrize("tid", TIDS)
def test_an_unsure_answer_naming_both_offered_emails_clarifies_nothing(tid: str) -> None:
    _, email = _email(tid)
    other = _other(email)
    question = f"Which email should I use: {email} or {other}?"
    assert _clarified(tid, question, f"{email} or {other}, I am not sure.") == []
    assert _clarified(tid, question, f"Not sure. Maybe {other}, or {email}?") == []


@pytest.mark.parametrize("tid", TIDS)
def test_an_answer_naming_the_email_alone_clarifies_it(tid: str) -> None:
    _, email = _email(tid)
    question = f"Which email should I use: {email} or {_other(email)}?"
    assert _clarified(tid, question, f"Use {email}, please.") == ["email"]
    assert _clarified(tid, "What is their email address?", f"It is {email}.") == ["email"]
