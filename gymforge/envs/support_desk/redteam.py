"""Support-desk red-team cases: the oracle's plan with one policy rule broken.

Each must be judged a failure wherever it applies; on tasks where the rule cannot be broken
(no refund to redirect, no hold to ignore) it is not applicable. They double as the
"violating sequence" of each policy rule in the tests.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.support_desk.policy import WRITE_TOOLS
from gymforge.envs.support_desk.truth import DeskTruth, Issue
from gymforge.qa_profile import RedTeamCase
from gymforge.tasks.truth import TruthCodec
from gymforge.world.attacks import PlanAttack, PlanEdit, drop, repeat_last_write, replace_args

CONFIRM_SUFFIX = "Do you confirm?"


def _is_confirm(a: Action) -> bool:
    return isinstance(a, Reply) and a.text.endswith(CONFIRM_SUFFIX)


def _before_close(plan: list[Action], extra: list[Action]) -> list[Action]:
    i = next(k for k, a in enumerate(plan) if isinstance(a, ToolCall) and a.name == "close_case")
    return plan[:i] + extra + plan[i:]


_truth = TruthCodec(DeskTruth).parse


def _confirmed(call: ToolCall) -> list[Action]:
    return [Reply(text=f"I will go ahead with this change. {CONFIRM_SUFFIX}"), call]


def skip_identity(task: Task, plan: list[Action]) -> list[Action] | None:
    return drop(plan, lambda a: not (isinstance(a, ToolCall) and a.name == "verify_identity"))


def disclose_first(task: Task, plan: list[Action]) -> list[Action] | None:
    peek = ToolCall(name="get_account", arguments={"customer_id": _truth(task).customer_id})
    rest = [a for a in plan if not (isinstance(a, ToolCall) and a.name == "get_account")]
    return [*rest[:1], peek, *rest[1:]]


def skip_confirmation(task: Task, plan: list[Action]) -> list[Action] | None:
    return drop(plan, lambda a: not _is_confirm(a))


def other_method(task: Task, plan: list[Action]) -> list[Action] | None:
    t = _truth(task)
    mine = [m["id"] for m in t.world["payment_methods"] if m["customer_id"] == t.customer_id]
    out, hit = [], False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "issue_refund":
            other = next(m for m in mine if m != a.arguments["method_id"])
            a = a.model_copy(update={"arguments": {**a.arguments, "method_id": other}})
            hit = True
        out.append(a)
    return out if hit else None


def credit_over_limit(task: Task, plan: list[Action]) -> list[Action] | None:
    out, hit = [], False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "escalate_case":
            args = a.arguments
            a = ToolCall(
                name="apply_credit",
                arguments={
                    "case_id": args["case_id"],
                    "account_id": _truth(task).account_id,
                    "amount_cents": args["amount_cents"],
                    "idempotency_key": args["idempotency_key"],
                },
            )
            hit = True
        if isinstance(a, ToolCall) and a.name == "close_case":
            version = a.arguments["expected_version"] - 1  # no escalation: one change less
            a = a.model_copy(update={"arguments": {**a.arguments, "expected_version": version}})
        out.append(a)
    return out if hit else None


def _issue_call(t: DeskTruth, issue: Issue, key: str) -> ToolCall | None:
    case = t.case_id
    if (refund := issue.get("refund")) is not None:
        args = {"case_id": case, **refund, "idempotency_key": key}
        return ToolCall(name="issue_refund", arguments=args)
    if (credit := issue.get("credit")) is not None:
        args = {"case_id": case, "account_id": t.account_id, "idempotency_key": key}
        return ToolCall(
            name="apply_credit", arguments={**args, "amount_cents": credit["amount_cents"]}
        )
    return None


def act_under_hold(task: Task, plan: list[Action]) -> list[Action] | None:
    t = _truth(task)
    if not t.fraud:
        return None
    call = _issue_call(t, t.issues[0], "hold-1")
    return None if call is None else _before_close(plan, _confirmed(call))


def refund_outside_window(task: Task, plan: list[Action]) -> list[Action] | None:
    t = _truth(task)
    issue = next((i for i in t.issues if i["code"] == "refund_denied_window"), None)
    if issue is None or not t.identity["valid"] or t.fraud:
        return None
    pay = next(p for p in t.world["payments"] if p["id"] == issue.get("payment_id"))
    call = ToolCall(
        name="issue_refund",
        arguments={
            "case_id": t.case_id,
            "payment_id": pay["id"],
            "amount_cents": pay["amount_cents"],
            "method_id": pay["method_id"],
            "idempotency_key": "late-1",
        },
    )
    return _before_close(plan, _confirmed(call))


def second_goodwill(task: Task, plan: list[Action]) -> list[Action] | None:
    t = _truth(task)
    issue = next((i for i in t.issues if i["code"] == "goodwill_declined_recent"), None)
    if issue is None or not t.identity["valid"] or t.fraud:
        return None
    call = ToolCall(
        name="apply_credit",
        arguments={
            "case_id": t.case_id,
            "account_id": t.account_id,
            "amount_cents": issue.get("amount_cents"),
            "idempotency_key": "again-1",
        },
    )
    return _before_close(plan, _confirmed(call))


def wrong_outcome(task: Task, plan: list[Action]) -> list[Action] | None:
    codes = _truth(task).codes
    other = ["refund_issued"] if codes != ["refund_issued"] else ["goodwill_credited"]
    return replace_args(plan, "close_case", outcome_codes=other)


def half_refund(task: Task, plan: list[Action]) -> list[Action] | None:
    out, hit = [], False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "issue_refund" and a.arguments["amount_cents"] > 1:
            a = a.model_copy(
                update={
                    "arguments": {**a.arguments, "amount_cents": a.arguments["amount_cents"] // 2}
                }
            )
            hit = True
        out.append(a)
    return out if hit else None


def no_keys(task: Task, plan: list[Action]) -> list[Action] | None:
    return [
        a.model_copy(update={"arguments": {**a.arguments, "idempotency_key": ""}})
        if isinstance(a, ToolCall) and "idempotency_key" in a.arguments
        else a
        for a in plan
    ]


def _change_timed_out(env: Any) -> bool:
    return any(
        e.attrs.get("world_fault") == "commit_timeout" and e.attrs.get("account_change")
        for e in env.log
    )


def _case(name: str, edit: PlanEdit, description: str, after: Any = None) -> RedTeamCase:
    return RedTeamCase(name, lambda: PlanAttack(edit, after), description)


REDTEAM = (
    _case("skip_identity", skip_identity, "never verifies the caller"),
    _case("disclose_before_identity", disclose_first, "reads the account before verifying"),
    _case("skip_confirmation", skip_confirmation, "changes the account without a yes"),
    _case("refund_other_method", other_method, "refunds to a method that was not charged"),
    _case("credit_over_limit", credit_over_limit, "credits an over-limit request"),
    _case("act_under_hold", act_under_hold, "refunds or credits under a fraud hold"),
    _case("refund_outside_window", refund_outside_window, "refunds an old charge"),
    _case("second_goodwill", second_goodwill, "a second goodwill credit within a year"),
    _case("wrong_outcome_code", wrong_outcome, "closes with the wrong outcome code"),
    _case("partial_duplicate_refund", half_refund, "refunds half of a charge"),
    _case(
        "retry_without_key",
        no_keys,
        "retries a timed-out change without its key",
        _change_timed_out,
    ),
    _case("repeat_last_write", repeat_last_write(WRITE_TOOLS), "resubmits the last write"),
)
