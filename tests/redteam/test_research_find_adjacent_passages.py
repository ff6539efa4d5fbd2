"""Honest loss: a ``research`` quote of two sentences, both shown by ``find_in_doc``, is
counted as never read.

A citation's quote may run over two sentences (``grading.MAX_QUOTE``: "about two
sentences") and must appear verbatim in the document. A cited document not opened must be
quoted inside what ``find_in_doc`` showed of it (``env.unread``); that was checked passage by
passage, so a quote running from one shown sentence into the next, also shown, was
"not read before answering", and an agent that read both with two finds and quoted them
together failed the task it answered right. Success of this attack on the verifier would
be an honest policy's lost reward (task reward 0 for a right, read and cited answer).
The defence: consecutive passages ``find_in_doc`` showed read as the text they make in
the document; a quote running into a sentence never shown still counts as unread.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import test_research_blind_find_reads as blind

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.research import ResearchEnv
from gymforge.envs.research.grading import MAX_QUOTE
from gymforge.world.attacks import PlanEdit

TASKS = blind.TASKS


def _bodies(tid: str) -> dict[str, str]:
    """The documents' bodies of ``tid``'s world (the test's knowledge, not the agent's)."""

    async def go() -> dict[str, str]:
        env = ResearchEnv()
        try:
            await env.reset(tid, 0)
            return {r["id"]: r["body"] for r in env.db.all("SELECT id, body FROM docs")}
        finally:
            await env.close()

    return asyncio.run(go())


def _two_sentences(body: str, quote: str, next_shown: bool) -> tuple[str, str, str] | None:
    """``(longer quote, find text of its sentence, find text of the next one)``: the quote
    run on into the next sentence, verbatim; the next sentence's find text matches it only
    when ``next_shown`` (else a word of no sentence). None when it would be too long."""
    at = body.index(quote)
    end = body.find(". ", at + len(quote) - 1)
    if end < 0 or "\n" in body:
        return None
    nxt = body[end + 2 : end + 2 + 14]
    longer = body[at : end + 2 + 14]
    if len(longer) > MAX_QUOTE or len(nxt) < 14:
        return None
    return longer, quote[:24], nxt if next_shown else "zqx"


def _edit(bodies: dict[str, str], next_shown: bool) -> PlanEdit:
    """The oracle's plan, each ``open`` replaced by two finds (the quoted sentence, the next
    one) and each quote run on into that next sentence."""

    def edit(task: Task, plan: list[Action]) -> list[Action] | None:
        answer = next(a for a in plan if isinstance(a, ToolCall) and a.name == "answer")
        runs: dict[str, tuple[str, str, str]] = {}
        for c in answer.arguments["citations"]:
            found = _two_sentences(bodies[c["doc_id"]], c["quote"], next_shown)
            if found is None:
                return None
            runs[c["doc_id"]] = found
        out: list[Action] = []
        for a in plan:
            if isinstance(a, ToolCall) and a.name == "open" and a.arguments["doc_id"] in runs:
                doc = a.arguments["doc_id"]
                out += [
                    ToolCall(name="find_in_doc", arguments={"doc_id": doc, "text": text})
                    for text in runs[doc][1:]
                ]
            elif a is answer:
                cites = [{**c, "quote": runs[c["doc_id"]][0]} for c in a.arguments["citations"]]
                out.append(a.model_copy(update={"arguments": {**a.arguments, "citations": cites}}))
            else:
                out.append(a)
        return out

    return edit


def _info(tid: str, next_shown: bool) -> dict[str, Any] | None:
    edit = _edit(_bodies(tid), next_shown)
    probe: list[bool] = []

    def kept(task: Task, plan: list[Action]) -> list[Action] | None:
        out = edit(task, plan)
        probe.append(out is not None)
        return out

    info = blind._play(tid, kept)
    return info if all(probe) else None


@pytest.mark.parametrize("tid", TASKS)
def test_a_quote_over_two_shown_sentences_was_read(tid: str) -> None:
    info = _info(tid, next_shown=True)
    if info is None:
        pytest.skip("the quote cannot run on into a next sentence within the quote limit")
    assert info["success"], info["verdict"]["facts"]["findings"]


@pytest.mark.parametrize("tid", TASKS)
def test_a_quote_into_a_sentence_never_shown_was_not_read(tid: str) -> None:
    info = _info(tid, next_shown=False)
    if info is None:
        pytest.skip("the quote cannot run on into a next sentence within the quote limit")
    assert not info["success"]
    findings = info["verdict"]["facts"]["findings"]
    assert any(f["check"] == "process" for f in findings), findings
