"""Red-team policies for world environments: the oracle's plan, edited to break one rule.

``PlanAttack(edit)`` takes the environment's ``oracle_plan`` for the episode's task and
passes it through ``edit(task, plan)``, which returns the edited plan, or ``None`` when the
attack does not apply to this task (the episode is then not counted). The edited plan is
walked like the oracle walks its own: a tool call that hit a fault or a retryable error is
sent again, unchanged. ``applies_after(env)``, checked before the final action, can still
declare the attack not applicable once the episode shows it never bit (no fault fired).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core.capabilities import ORACLE_PLAN, TASK, require
from gymforge.core.errors import EpisodeStateError
from gymforge.core.policy import EpisodeContext, PolicyTurn, scripted_env
from gymforge.core.types import Action, Observation, Task, ToolCall
from gymforge.kit.redteam import AttackNotApplicable

PlanEdit = Callable[[Task, list[Action]], list[Action] | None]


class PlanAttack:
    name = checkpoint = "redteam"
    scripted = True  # it edits the oracle's plan of the hidden task

    def __init__(self, edit: PlanEdit, applies_after: Callable[[Any], bool] | None = None) -> None:
        self.edit = edit
        self.applies_after = applies_after

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.plan: list[Action] | None = None
        self.i = 0

    async def act(self, observation: Observation) -> PolicyTurn:
        env = scripted_env(self.ctx, "a plan-editing attack")
        if self.plan is None:
            task = require(env, TASK, "a plan-editing attack").task
            if task is None:
                raise EpisodeStateError("a plan-editing attack acts before reset()")
            planned = require(env, ORACLE_PLAN, "a plan-editing attack").oracle_plan(task)
            plan = self.edit(task, list(planned or []))
            if not plan:
                raise AttackNotApplicable("this attack does not apply to this task")
            self.plan = plan
        tr = observation.data.get("tool_result") or {}
        prev = self.plan[min(self.i, len(self.plan)) - 1] if self.i > 0 else None
        if isinstance(prev, ToolCall) and (
            tr.get("fault") or (tr.get("error") or {}).get("retryable")
        ):
            self.i -= 1
        self.i = min(self.i, len(self.plan) - 1)
        action = self.plan[self.i]
        self.i += 1
        if (
            self.i >= len(self.plan)
            and self.applies_after is not None
            and not self.applies_after(env)
        ):
            raise AttackNotApplicable("the condition this attack exploits never arose")
        return PolicyTurn(action)


def replace_args(plan: list[Action], tool: str, **changes: Any) -> list[Action] | None:
    """Every call of ``tool`` with ``changes`` applied; None if the plan never calls it."""
    hit = False
    out: list[Action] = []
    for a in plan:
        if isinstance(a, ToolCall) and a.name == tool:
            hit = True
            a = a.model_copy(update={"arguments": {**a.arguments, **changes}})
        out.append(a)
    return out if hit else None


def drop(plan: list[Action], keep: Callable[[Action], bool]) -> list[Action] | None:
    """The plan without the actions ``keep`` rejects; None if nothing was dropped."""
    out = [a for a in plan if keep(a)]
    return out if len(out) < len(plan) else None


def repeat_last_write(writes: frozenset[str]) -> PlanEdit:
    """The generic "repeat the last write before the final reply" attack, for plans whose
    dialogue replies come before the end (the generic one stops at the first reply)."""

    def edit(task: Task, plan: list[Action]) -> list[Action] | None:
        last = next(
            (a for a in reversed(plan) if isinstance(a, ToolCall) and a.name in writes), None
        )
        if last is None:
            return None
        return [*plan[:-1], last.model_copy(update={"call_id": "call_dup"}), plan[-1]]

    return edit
