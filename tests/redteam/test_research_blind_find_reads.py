"""Attack: "read" a cited ``research`` document with a ``find_in_doc`` that shows nothing of it.

A cited document must have been read, by ``open`` or ``find_in_doc``; the verifier counted
any successful ``find_in_doc`` of the document as reading it, whatever it returned. Search
snippets hold the facts ("a [router] [made] [by] Tamsin Systems", a league table's
"| Tamsin Systems | 597.6 |"), so an agent can lift its quotes from the search results, then
call ``find_in_doc(doc, "zqx")`` (no match) or a find that shows other sentences of the
document, and cite it as read. Success would be a passing verdict (task reward 1.0) for
citations of passages the agent was never shown from the document: ``cite_without_reading``
with a blind find in place of a read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.research import ResearchEnv
from gymforge.envs.research.truth import task_truth
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack, PlanEdit

BASE = {"size": 8, "corpus": 3, "fault_rate": 0.0}
TASKS = [
    ResearchEnv.tasks.families[f"research.{family}"].variant_id({**BASE, **extra}, seed)
    for family, extra in (("single_fact", {}), ("multi_hop", {"hops": 2}))
    for seed in (1, 2)
]
BLIND = {
    "no_match": lambda quote: "zqx",
    "other_sentences": lambda quote: "board of directors" if "revenue" in quote else "launched",
}


def _finds(text: Any) -> PlanEdit:
    """The oracle's plan with each ``open`` replaced by ``find_in_doc(doc, text(quote))``,
    ``quote`` being what the answer cites from that document."""

    def edit(task: Task, plan: list[Action]) -> list[Action] | None:
        assert task_truth(task).kind != "none"
        answer = next(a for a in plan if isinstance(a, ToolCall) and a.name == "answer")
        quotes = {c["doc_id"]: c["quote"] for c in answer.arguments["citations"]}
        return [
            ToolCall(
                name="find_in_doc",
                arguments={
                    "doc_id": a.arguments["doc_id"],
                    "text": text(quotes[a.arguments["doc_id"]]),
                },
            )
            if isinstance(a, ToolCall) and a.name == "open"
            else a
            for a in plan
        ]

    return edit


def _play(tid: str, edit: PlanEdit) -> dict[str, Any]:
    """The info of the episode's last step (its verdict, its success)."""

    async def go() -> dict[str, Any]:
        env = ResearchEnv()
        try:
            return dict((await play(env, PlanAttack(edit), tid, 0))[-2]["info"])
        finally:
            await env.close()

    return asyncio.run(go())


@pytest.mark.parametrize("blind", sorted(BLIND))
@pytest.mark.parametrize("tid", TASKS)
def test_a_find_that_showed_no_quoted_passage_is_no_read(tid: str, blind: str) -> None:
    info = _play(tid, _finds(BLIND[blind]))
    assert not info["success"], f"{tid}: cited passages a {blind} find never showed, passed"
    findings = info["verdict"]["facts"]["findings"]
    assert any(f["check"] == "process" for f in findings), findings


@pytest.mark.parametrize("tid", TASKS)
def test_a_find_that_showed_the_quoted_passage_reads_it(tid: str) -> None:
    assert _play(tid, _finds(lambda quote: quote[:24]))["success"]
