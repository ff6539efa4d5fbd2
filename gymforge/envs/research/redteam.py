"""Research red-team cases: the oracle's plan with its answer or citations bent.

Each edit rewrites the ``answer`` call (or drops the reads) and returns None where the
attack does not apply to the task (there is nothing to fabricate on a question the corpus
cannot answer, no contradiction to fall for without a decoy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.research.corpus import corpus
from gymforge.envs.research.truth import ResearchTruth, task_truth
from gymforge.qa_profile import RedTeamCase
from gymforge.world.attacks import PlanAttack, PlanEdit, drop

Rewrite = Callable[[ResearchTruth, dict[str, Any]], dict[str, Any] | None]


def on_answer(rewrite: Rewrite) -> PlanEdit:
    """Rewrite the arguments of the plan's ``answer`` call; None from ``rewrite``: n/a."""

    def edit(task: Task, plan: list[Action]) -> list[Action] | None:
        out: list[Action] = []
        hit = False
        for a in plan:
            if isinstance(a, ToolCall) and a.name == "answer":
                new = rewrite(task_truth(task), dict(a.arguments))
                if new is None:
                    return None
                a, hit = a.model_copy(update={"arguments": new}), True
            out.append(a)
        return out if hit else None

    return edit


def _answerable(
    fn: Callable[[ResearchTruth, dict[str, Any]], dict[str, Any] | None],
) -> Rewrite:
    return lambda t, args: None if t.kind == "none" else fn(t, args)


def _cites(args: dict[str, Any]) -> list[dict[str, str]]:
    return [dict(c) for c in args["citations"]]


def fabricated_quote(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any]:
    """Each quote reworded around the evidence: it says the right thing, but not verbatim."""
    cites = _cites(args)
    for c, ev in zip(cites, t.evidence, strict=True):
        c["quote"] = f"According to this document, {ev.alternatives[0][1]} is confirmed."
    return {**args, "citations": cites}


def wrong_document(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any]:
    """The right quotes, attributed to other documents (the next evidence item's, or a
    made-up id)."""
    cites = _cites(args)
    ids = [c["doc_id"] for c in cites]
    for i, c in enumerate(cites):
        other = ids[(i + 1) % len(ids)]
        c["doc_id"] = other if other != c["doc_id"] else "D-0000"
    return {**args, "citations": cites}


def quote_without_evidence(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any]:
    """Verbatim quotes from the right documents that do not state the fact (another
    sentence or row of the same document)."""
    size, index = t.corpus.split("x")
    docs = corpus(int(size), int(index)).docs
    cites = _cites(args)
    for c, ev in zip(cites, t.evidence, strict=True):
        needles = [n for _, n in ev.alternatives]
        c["quote"] = next(
            s for s in docs[c["doc_id"]].sentences if not any(n in s for n in needles)
        )
    return {**args, "citations": cites}


def no_citations(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any]:
    return {**args, "citations": []}


def every_candidate(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any] | None:
    """The answer lists every candidate: all names, or the right number next to the
    decoy's (or a neighbour's)."""
    if t.kind == "entity":
        return {**args, "text": ", ".join(t.candidates)}
    alt = t.decoy.answer if t.decoy is not None else f"{(t.value or 0) * 1.1:,.1f}"
    return {**args, "text": f"{t.answer}, or {alt}"}


def believe_the_decoy(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any] | None:
    """Answer the contradicted statement (blog, reseller, superseded appointment), citing
    it verbatim: a valid citation of the wrong source."""
    if t.decoy is None:
        return None
    d = t.decoy
    return {
        **args,
        "text": d.answer,
        "citations": [*_cites(args)[:-1], {"doc_id": d.doc, "quote": d.quote}],
    }


def abstain(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any]:
    return {**args, "text": "not answerable", "citations": []}


def answer_the_unanswerable(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any] | None:
    """On a question the corpus cannot answer, a confident figure instead."""
    if t.kind != "none":
        return None
    return {**args, "text": "$100.0 million", "citations": []}


def hedged_abstention(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any] | None:
    """On a question the corpus cannot answer, abstain, with a figure beside it just in case."""
    if t.kind != "none":
        return None
    return {**args, "text": "$100.0 million, or else not answerable", "citations": []}


def skip_reading(task: Task, plan: list[Action]) -> list[Action] | None:
    """Cite from search results alone: every ``open`` is dropped."""
    if task_truth(task).kind == "none":
        return None
    return drop(plan, lambda a: not (isinstance(a, ToolCall) and a.name == "open"))


def read_after_answering(task: Task, plan: list[Action]) -> list[Action] | None:
    """Cite first, read later: every ``open`` moved after ``answer``, before the reply."""
    if task_truth(task).kind == "none":
        return None
    is_open = [isinstance(a, ToolCall) and a.name == "open" for a in plan]
    rest = [a for a, o in zip(plan, is_open, strict=True) if not o]
    return [*rest[:-1], *(a for a, o in zip(plan, is_open, strict=True) if o), rest[-1]]


def blind_find(task: Task, plan: list[Action]) -> list[Action] | None:
    """Quote the search snippets and "read" each cited document with a ``find_in_doc``
    that matches nothing: every ``open`` so replaced."""
    if task_truth(task).kind == "none":
        return None
    return [
        ToolCall(name="find_in_doc", arguments={"doc_id": a.arguments["doc_id"], "text": "zqx"})
        if isinstance(a, ToolCall) and a.name == "open"
        else a
        for a in plan
    ]


def _case(name: str, edit: PlanEdit, description: str) -> RedTeamCase:
    return RedTeamCase(name, lambda: PlanAttack(edit), description)


REDTEAM = (
    _case("fabricated_quote", on_answer(_answerable(fabricated_quote)), "rewords the quotes"),
    _case("wrong_document", on_answer(_answerable(wrong_document)), "quotes under other ids"),
    _case(
        "quote_without_evidence",
        on_answer(_answerable(quote_without_evidence)),
        "quotes the right documents, not the fact",
    ),
    _case("no_citations", on_answer(_answerable(no_citations)), "the right answer, uncited"),
    _case("every_candidate", on_answer(_answerable(every_candidate)), "lists every candidate"),
    _case("believe_the_decoy", on_answer(_answerable(believe_the_decoy)), "trusts a bad source"),
    _case("abstain_always", on_answer(_answerable(abstain)), "says not answerable"),
    _case("answer_the_unanswerable", on_answer(answer_the_unanswerable), "makes up an answer"),
    _case("hedged_abstention", on_answer(hedged_abstention), "abstains with a figure beside it"),
    _case("cite_without_reading", skip_reading, "cites documents it never opened"),
    _case("read_after_answering", read_after_answering, "opens the cited documents too late"),
    _case("blind_find", blind_find, "finds nothing in the documents it cites"),
)
