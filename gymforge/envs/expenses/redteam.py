"""Expenses red-team cases: the oracle's plan with decisions or process bent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.expenses.policy import WRITE_TOOLS
from gymforge.envs.expenses.truth import ExpenseTruth
from gymforge.qa_profile import RedTeamCase
from gymforge.tasks.truth import TruthCodec
from gymforge.world.attacks import PlanAttack, PlanEdit, drop, repeat_last_write

Rewrite = Callable[[Task, dict[str, Any]], dict[str, Any] | None]


def _decisions(rewrite: Rewrite) -> PlanEdit:
    """Rewrite the arguments of ``decide_report`` calls; None from ``rewrite`` keeps one."""

    def edit(task: Task, plan: list[Action]) -> list[Action] | None:
        out, hit = [], False
        for a in plan:
            if isinstance(a, ToolCall) and a.name == "decide_report":
                new = rewrite(task, dict(a.arguments))
                if new is not None and new != a.arguments:
                    a, hit = a.model_copy(update={"arguments": new}), True
            out.append(a)
        return out if hit else None

    return edit


_truth = TruthCodec(ExpenseTruth).parse


def _report(task: Task, rid: str) -> dict[str, Any]:
    return next(r for r in _truth(task).world["reports"] if r["id"] == rid)


def approve_all(task: Task, args: dict[str, Any]) -> dict[str, Any] | None:
    usd = _truth(task).decisions[args["report_id"]]["usd"]
    return {
        **args,
        "decision": "approve",
        "reason_code": "within_policy",
        "approved_usd_cents": usd,
    }


def unconverted(task: Task, args: dict[str, Any]) -> dict[str, Any] | None:
    rep = _report(task, args["report_id"])
    if args["decision"] != "approve" or rep["currency"] == "USD":
        return None
    return {**args, "approved_usd_cents": rep["amount_cents"]}


def ignore_duplicates(task: Task, args: dict[str, Any]) -> dict[str, Any] | None:
    if args["reason_code"] != "duplicate":
        return None
    return approve_all(task, args)


def skip_reading(task: Task, plan: list[Action]) -> list[Action] | None:
    return drop(plan, lambda a: not (isinstance(a, ToolCall) and a.name == "get_report"))


def no_keys(task: Task, plan: list[Action]) -> list[Action] | None:
    return [
        a.model_copy(update={"arguments": {**a.arguments, "idempotency_key": ""}})
        if isinstance(a, ToolCall) and a.name in WRITE_TOOLS
        else a
        for a in plan
    ]


def half_then_reply(task: Task, plan: list[Action]) -> list[Action] | None:
    decide = [
        i for i, a in enumerate(plan) if isinstance(a, ToolCall) and a.name == "decide_report"
    ]
    cut = decide[len(decide) // 2]
    return [*plan[:cut], plan[-1]]


def _case(name: str, edit: PlanEdit, description: str) -> RedTeamCase:
    return RedTeamCase(name, lambda: PlanAttack(edit), description)


REDTEAM = (
    _case("approve_everything", _decisions(approve_all), "approves every report as filed"),
    _case("unconverted_amounts", _decisions(unconverted), "approves foreign amounts unconverted"),
    _case("ignore_duplicates", _decisions(ignore_duplicates), "approves duplicates"),
    _case("decide_without_reading", skip_reading, "decides from the list alone"),
    _case("writes_without_keys", no_keys, "sends writes without idempotency keys"),
    _case("stop_halfway", half_then_reply, "decides half the batch and reports done"),
    _case("repeat_last_write", repeat_last_write(WRITE_TOOLS), "resubmits the batch"),
)
