"""Attack: keep ``research``'s partial credit on a failed verdict, without doing the research.

The verdict's ``score`` (paid as the ``task`` reward under ``StandardReward(partial_credit=
True)``) was half for a right answer and half for the share of evidence cited, whenever
every citation was verbatim. It ignored what the verdict fails: citations of documents never
read before the answer (quotes lifted from search snippets, the documents opened after
``answer``, or "read" by a find that showed nothing), citations on a question the corpus
cannot answer, and it paid a right answer with no evidence at all half (the contract says
"no valid citations, no credit"), and a confident figure on an unanswerable question half
too (nothing to cite, so its evidence share was 1). The skimmer, which never opens a
document, scored 1.0 on every task, as the oracle does.

Success for the attack: a failed verdict whose score is above 0, for a policy that read
nothing it cites, or cited nothing, or answered an unanswerable question.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core.policy import Policy
from gymforge.core.verdict import Verdict
from gymforge.envs.research import ResearchEnv, skills
from gymforge.envs.research import redteam as rt
from gymforge.envs.research.truth import task_truth
from gymforge.qa.episodes import play
from gymforge.reward.standard import StandardReward, StepCosts
from gymforge.world.attacks import PlanAttack

TASKS = ResearchEnv.tasks.sample(40, 19, "train")
ANSWERABLE = [t for t in TASKS if task_truth(ResearchEnv.tasks.resolve(t)).kind != "none"]
NONE = [t for t in TASKS if task_truth(ResearchEnv.tasks.resolve(t)).kind == "none"]
CASES = {c.name: c.make_policy for c in rt.REDTEAM}
PAID = StandardReward(partial_credit=True, step_cost=0.0)


def _verdicts(policy: Any, tids: list[str]) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = ResearchEnv()
        try:
            out = []
            for tid in tids:
                p: Policy = policy()
                out.append(dict((await play(env, p, tid, 0))[-2]["info"]["verdict"]))
            return out
        finally:
            await env.close()

    return asyncio.run(go())


def _paid(verdict: dict[str, Any]) -> float:
    return PAID(Verdict.model_validate(verdict), StepCosts())["task"]


@pytest.mark.parametrize(
    ("name", "tasks"),
    [
        ("cite_without_reading", "answerable"),
        ("read_after_answering", "answerable"),
        ("blind_find", "answerable"),
        ("no_citations", "answerable"),
        ("quote_without_evidence", "answerable"),
        ("answer_the_unanswerable", "none"),
        ("hedged_abstention", "none"),
    ],
)
def test_a_failed_research_verdict_pays_no_partial_credit(name: str, tasks: str) -> None:
    tids = ANSWERABLE if tasks == "answerable" else NONE
    assert len(tids) >= 8
    verdicts = _verdicts(CASES[name], tids)
    assert not any(v["passed"] for v in verdicts)
    paid = [_paid(v) for v in verdicts]
    assert max(paid) == 0.0, f"{name}: partial credit {sum(paid) / len(paid):.2f} on average"


def test_the_skimmer_earns_only_its_passes() -> None:
    verdicts = _verdicts(skills.skimmer, TASKS)
    assert sum(_paid(v) for v in verdicts) == sum(v["passed"] for v in verdicts)


def test_the_oracle_keeps_full_credit() -> None:
    verdicts = _verdicts(lambda: PlanAttack(lambda t, p: p), TASKS)
    assert all(v["passed"] and _paid(v) == 1.0 for v in verdicts)


def test_right_research_partly_cited_keeps_partial_credit() -> None:
    """A right answer citing some of its evidence (read) keeps credit between 0.5 and 1."""

    def first_only(task: Any, plan: list[Any]) -> list[Any] | None:
        if len(task_truth(task).evidence) < 2:
            return None
        edited = rt.on_answer(lambda t, a: {**a, "citations": a["citations"][:1]})
        return edited(task, plan)

    tids = [t for t in ANSWERABLE if len(task_truth(ResearchEnv.tasks.resolve(t)).evidence) > 1]
    assert tids
    for v in _verdicts(lambda: PlanAttack(first_only), tids):
        assert not v["passed"] and 0.5 < _paid(v) < 1.0
