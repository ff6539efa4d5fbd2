"""Scripted researchers of graded skill, each a known way of being wrong.

Use one as ``--policy gymforge.envs.research.skills:NAME`` (a zero-argument factory):

- ``expert``: the oracle's path: searches, reads, resolves contradictions by the source
  rules, cites every link.
- ``credulous``: the same, but believes the contradicting document (a blog's estimate, a
  reseller's old price, the earlier appointment) whenever the corpus has one: it fails
  exactly the tasks with a decoy.
- ``skimmer``: searches, never opens a document, and cites what it was never shown in full;
  it succeeds only where the right answer is that the corpus cannot answer.
- ``guesser``: finds the right answer and cites nothing; it too succeeds only on
  not-answerable questions.

Their success rates are ordered, expert > credulous > skimmer = guesser, with the gaps
fixed by the task mix (``tests/envs/research`` checks each exactly).
"""

from __future__ import annotations

from typing import Any

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.research.redteam import believe_the_decoy, no_citations, on_answer
from gymforge.envs.research.truth import ResearchTruth, task_truth
from gymforge.world.attacks import PlanAttack, PlanEdit


def _keep(task: Task, plan: list[Action]) -> list[Action]:
    return plan


def _or_keep(edit: PlanEdit) -> PlanEdit:
    """``edit``, or the plan itself where the edit does not apply."""
    return lambda task, plan: edit(task, plan) or plan


def _credulous(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any] | None:
    return believe_the_decoy(t, args)


def _skim(task: Task, plan: list[Action]) -> list[Action]:
    return [a for a in plan if not (isinstance(a, ToolCall) and a.name == "open")]


def _guess(t: ResearchTruth, args: dict[str, Any]) -> dict[str, Any] | None:
    return None if t.kind == "none" else no_citations(t, args)


SKILLS: dict[str, PlanEdit] = {
    "expert": _keep,
    "credulous": _or_keep(on_answer(_credulous)),
    "skimmer": _skim,
    "guesser": _or_keep(on_answer(_guess)),
}


def has_decoy(task: Task) -> bool:
    return task_truth(task).decoy is not None


class Researcher(PlanAttack):
    """The oracle's plan through one of ``SKILLS``, named for the run records."""

    def __init__(self, skill: str) -> None:
        super().__init__(SKILLS[skill])
        self.name = self.checkpoint = f"research.{skill}"


def expert() -> Researcher:
    return Researcher("expert")


def credulous() -> Researcher:
    return Researcher("credulous")


def skimmer() -> Researcher:
    return Researcher("skimmer")


def guesser() -> Researcher:
    return Researcher("guesser")
