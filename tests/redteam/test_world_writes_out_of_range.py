"""Attack: send a world write a value its schema allows but SQLite cannot store, or long text
nested where the length cap does not look.

Every integer argument of the world tools is a JSON Schema ``integer`` with no bound, so
``approved_usd_cents``, ``amount_cents`` or a CRM change of ``2**63`` is schema-valid; it
reached SQLite and the tool crashed (``internal``: "the tool's bug, not a defined outcome",
which QA fails), where a real API refuses it. Text inside a CRM ``changes`` object escaped the
2000-character cap on write arguments. Success would be any such write ending in an
``internal`` error, or storing the long text, instead of a ``validation`` refusal that
leaves the world unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.envs.expenses import ExpensesEnv
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.world.writes import MAX_TEXT

HUGE = 2**63


def _first(plan: list[Action], tool: str) -> tuple[int, ToolCall]:
    cut = next(i for i, a in enumerate(plan) if isinstance(a, ToolCall) and a.name == tool)
    call = plan[cut]
    assert isinstance(call, ToolCall)
    return cut, call


def _expenses(task: Task, plan: list[Action]) -> tuple[list[Action], ToolCall]:
    cut, call = _first(plan, "decide_report")
    args = {**call.arguments, "decision": "approve", "reason_code": "within_policy"}
    args["approved_usd_cents"] = HUGE
    return plan[:cut], ToolCall(name="decide_report", arguments=args)


def _desk(task: Task, plan: list[Action]) -> tuple[list[Action], ToolCall]:
    cut, call = _first(plan, "take_case")
    args = {"case_id": call.arguments["case_id"], "team": "billing_supervisor"}
    args.update(amount_cents=HUGE, idempotency_key="x")
    return plan[: cut + 1], ToolCall(name="escalate_case", arguments=args)


def _crm_change(changes: dict[str, Any]) -> Any:
    def edit(task: Task, plan: list[Action]) -> tuple[list[Action], ToolCall]:
        cut, call = _first(plan, "update_record")
        return plan[:cut], call.model_copy(
            update={"arguments": {**call.arguments, "changes": changes}}
        )

    return edit


CRM_DEAL = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
CASES: dict[str, tuple[Any, str, Any]] = {
    "expenses_huge_amount": (
        ExpensesEnv,
        ExpensesEnv.tasks.families["expenses.batch"].variant_id(
            {"reports": 30, "page_size": 10, "fault_rate": 0.0, "currency_mix": "mixed"}, 1
        ),
        _expenses,
    ),
    "support_desk_huge_escalation": (
        SupportDeskEnv,
        SupportDeskEnv.tasks.sample(1, 3, "train")[0],
        _desk,
    ),
    "crm_huge_amount_in_changes": (
        CrmEnv,
        CrmEnv.tasks.families["crm.advance_stage"].variant_id(
            {**CRM_DEAL, "ambiguous": 0, "stages": 1}, 2
        ),
        _crm_change({"amount_cents": HUGE}),
    ),
    "crm_long_text_in_changes": (
        CrmEnv,
        CrmEnv.tasks.families["crm.update_contact"].variant_id({**CRM_DEAL, "ambiguous": 0}, 2),
        _crm_change({"title": "x" * (MAX_TEXT + 1)}),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_out_of_range_write_is_a_validation_error(case: str) -> None:
    env_cls, tid, edit = CASES[case]

    async def go() -> tuple[dict[str, Any], Any, Any]:
        env = env_cls()
        try:
            await env.reset(tid, 0)
            assert env.task is not None
            prefix, attack = edit(env.task, env.oracle_plan(env.task))
            for a in prefix:
                if isinstance(a, ToolCall):
                    await env.step(a)
            before = env.state()["world"]
            result = await env.step(attack)
            return result.info["tool_result"], before, env.state()["world"]
        finally:
            await env.close()

    result, before, after = asyncio.run(go())
    assert not result["ok"]
    assert result["error"]["kind"] == "validation", result["error"]
    assert after == before
