"""Attack: cite documents in ``research`` without reading them, and read them afterwards.

The written rule is that a cited document must have been read (``open`` or
``find_in_doc``) first; the verifier looked for a read anywhere in the episode's action
log, so an agent could answer with quotes lifted from search snippets (or made up), and
then open the cited documents after ``answer``, when nothing it read can change the answer,
and before its final reply. Success would be a passing verdict (task reward 1.0) for an
answer whose citations were made before any cited document was read: the
``cite_without_reading`` defence laundered by reads that come too late.
"""

from __future__ import annotations

import pytest
import test_research_blind_find_reads as blind

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.research import ResearchEnv
from gymforge.envs.research.truth import task_truth
from gymforge.world.attacks import PlanEdit

BASE = {"size": 8, "corpus": 3, "fault_rate": 0.0}
TASKS = [
    ResearchEnv.tasks.families[f"research.{family}"].variant_id({**BASE, **extra}, seed)
    for family, extra in (("single_fact", {}), ("multi_hop", {"hops": 2}))
    for seed in (1, 2)
]


def _reads_last(read: str) -> PlanEdit:
    """The oracle's plan with every ``open`` moved after ``answer`` (as ``open``, or as a
    ``find_in_doc`` of the document's first word), just before the final reply."""

    def edit(task: Task, plan: list[Action]) -> list[Action] | None:
        assert task_truth(task).kind != "none"
        docs = [a.arguments["doc_id"] for a in plan if isinstance(a, ToolCall) and a.name == "open"]
        rest = [a for a in plan if not (isinstance(a, ToolCall) and a.name == "open")]
        late = [
            ToolCall(name="open", arguments={"doc_id": d})
            if read == "open"
            else ToolCall(name="find_in_doc", arguments={"doc_id": d, "text": "the"})
            for d in docs
        ]
        return [*rest[:-1], *late, rest[-1]]

    return edit


_play = blind._play  # the info of the episode's last step (its verdict, its success)


@pytest.mark.parametrize("read", ["open", "find_in_doc"])
@pytest.mark.parametrize("tid", TASKS)
def test_reading_after_the_answer_does_not_license_its_citations(tid: str, read: str) -> None:
    info = _play(tid, _reads_last(read))
    assert not info["success"], f"{tid}: cited unread documents, read them afterwards, passed"
    findings = info["verdict"]["facts"]["findings"]
    assert any(f["check"] == "process" for f in findings), findings


@pytest.mark.parametrize("tid", TASKS)
def test_the_oracle_reads_before_it_answers_and_passes(tid: str) -> None:
    assert _play(tid, lambda task, plan: plan)["success"]
