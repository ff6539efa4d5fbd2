"""Scripted CRM agents of graded skill, each a known failure mode of a real agent.

They play the oracle's plan with one habit changed, so their pass rates follow from the
task mix and show what the verifier distinguishes:

- ``expert``: the oracle (reads, asks exactly when the request is ambiguous, keyed writes);
- ``hasty``: never asks; on an ambiguous request it acts on the look-alike record (or, when
  a value was left out, goes ahead without it) - passes only the clear requests;
- ``anxious``: asks on every request - passes only the ambiguous ones;
- ``careless``: skips the reads, searches and questions - passes nothing.

Use one as ``--policy gymforge.envs.crm.agents:hasty``.
"""

from __future__ import annotations

from gymforge.core.policy import Policy
from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.crm import redteam as rt
from gymforge.world.attacks import PlanAttack, PlanEdit, drop


def _habit(edit: PlanEdit) -> PlanEdit:
    """``edit`` where it applies, the plan unchanged elsewhere."""
    return lambda task, plan: edit(task, plan) or plan


def _hasty(task: Task, plan: list[Action]) -> list[Action] | None:
    return rt.guess(task, plan) or rt.ask_nothing(task, plan)


def _careless(task: Task, plan: list[Action]) -> list[Action] | None:
    reads = ("get_record", "search", "get_pipeline", "ask_requester")
    return drop(plan, lambda a: not (isinstance(a, ToolCall) and a.name in reads))


def _agent(name: str, edit: PlanEdit) -> PlanAttack:
    agent = PlanAttack(_habit(edit))
    agent.name = agent.checkpoint = f"crm-{name}"
    return agent


def expert() -> Policy:
    return _agent("expert", lambda task, plan: plan)


def hasty() -> Policy:
    return _agent("hasty", _hasty)


def anxious() -> Policy:
    return _agent("anxious", rt.needless_question)


def careless() -> Policy:
    return _agent("careless", _careless)


LEVELS = {"expert": expert, "hasty": hasty, "anxious": anxious, "careless": careless}
