"""Every support-desk policy rule: a compliant sequence (the oracle's) passes and a
violating one (the oracle's with that rule broken) fails, for that rule's reason."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core import Action, Reply, Task, ToolCall
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk import redteam as rt
from gymforge.envs.support_desk.env import ASK_IDENTITY
from gymforge.qa.checks.common import play
from gymforge.world.attacks import PlanAttack, PlanEdit, repeat_last_write

BASE = {"distractors": 0, "page_size": 8, "fault_rate": 0.0, "region": "na"}


def task_id(family: str, seed: int = 1, **params: Any) -> str:
    fam = SupportDeskEnv.tasks.families[f"support.{family}"]
    return fam.variant_id({**BASE, **params}, seed)


def run(tid: str, edit: PlanEdit | None = None, seed: int = 0) -> dict[str, Any]:
    """Play the (edited) oracle plan; return the final step's info."""

    async def go() -> list[dict[str, Any]]:
        env = SupportDeskEnv()
        try:
            return await play(env, PlanAttack(edit or (lambda t, p: p)), tid, seed)
        finally:
            await env.close()

    records = asyncio.run(go())
    return records[-2]["info"]


def verify_before_asking(task: Task, plan: list[Action]) -> list[Action]:
    ask = next(i for i, a in enumerate(plan) if isinstance(a, Reply) and a.text == ASK_IDENTITY)
    verify = next(
        i for i, a in enumerate(plan) if isinstance(a, ToolCall) and a.name == "verify_identity"
    )
    out = list(plan)
    out[ask], out[verify] = out[verify], out[ask]
    return out


def peek_after_failed_identity(task: Task, plan: list[Action]) -> list[Action]:
    peek = ToolCall(name="list_payments", arguments={"account_id": task.truth["account_id"]})
    return [*plan[:-2], peek, *plan[-2:]]


def collateral_escalation(task: Task, plan: list[Action]) -> list[Action]:
    esc = ToolCall(
        name="escalate_case",
        arguments={"case_id": task.truth["case_id"], "team": "fraud", "idempotency_key": "x1"},
    )
    fixed = [
        a.model_copy(update={"arguments": {**a.arguments, "expected_version": 3}})
        if isinstance(a, ToolCall) and a.name == "close_case"
        else a
        for a in plan
    ]
    return rt._before_close(fixed, rt._confirmed(esc))


DUP = ("duplicate_charge", {})
CASES: list[tuple[str, tuple[str, dict[str, Any]], PlanEdit, str, str | None]] = [
    ("identity before disclosure", DUP, rt.disclose_first, "process", "identity_before_disclosure"),
    ("identity before any change", DUP, rt.skip_identity, "process", "identity_before_change"),
    (
        "identity details come from the customer",
        DUP,
        verify_before_asking,
        "process",
        "identity_details_from_customer",
    ),
    (
        "wrong caller: nothing disclosed",
        ("wrong_identity", {"issue": "duplicate", "wrong": "zip"}),
        peek_after_failed_identity,
        "process",
        "identity_before_disclosure",
    ),
    (
        "wrong caller: identity was checked",
        ("wrong_identity", {"issue": "refund", "wrong": "email"}),
        rt.skip_identity,
        "process",
        "identity_checked_before_close",
    ),
    ("confirm before every change", DUP, rt.skip_confirmation, "process", "confirm_before_change"),
    (
        "refund only inside the window",
        ("refund_window", {"inside": 0}),
        rt.refund_outside_window,
        "policy",
        "refund_window",
    ),
    (
        "refund only to the original method",
        ("refund_window", {"inside": 1}),
        rt.other_method,
        "policy",
        "refund_original_method",
    ),
    ("a duplicate charge is refunded in full", DUP, rt.half_refund, "wrong_rows", None),
    (
        "goodwill up to the limit",
        ("over_limit", {}),
        rt.credit_over_limit,
        "policy",
        "goodwill_limit",
    ),
    ("above the limit: escalate", ("over_limit", {}), rt.credit_over_limit, "missing_change", None),
    (
        "goodwill at most once a year",
        ("goodwill", {"recent": 1}),
        rt.second_goodwill,
        "policy",
        "goodwill_once_per_year",
    ),
    (
        "no action under a fraud hold",
        ("fraud_hold", {"issue": "duplicate"}),
        rt.act_under_hold,
        "policy",
        "fraud_hold",
    ),
    (
        "no action once the hold was seen",
        ("fraud_hold", {"issue": "goodwill"}),
        rt.act_under_hold,
        "process",
        "no_action_under_hold",
    ),
    ("writes carry idempotency keys", DUP, rt.no_keys, "process", "idempotency_key_required"),
    (
        "no resubmission of a write that succeeded",
        DUP,
        repeat_last_write(rt.WRITE_TOOLS),
        "process",
        "no_duplicate_submission",
    ),
    ("outcome codes are structured and checked", DUP, rt.wrong_outcome, "outcome", None),
    ("collateral damage fails", DUP, collateral_escalation, "collateral", None),
]


@pytest.mark.parametrize(
    ("name", "where", "edit", "check", "rule"), CASES, ids=[c[0] for c in CASES]
)
def test_rule(
    name: str, where: tuple[str, dict[str, Any]], edit: PlanEdit, check: str, rule: str | None
) -> None:
    family, params = where
    seed = 1 if family != "over_limit" else 4  # seed 4: an amount within the agent's authority
    tid = task_id(family, seed, **params)
    good = run(tid)
    assert good["success"], good["verdict"]["facts"]["findings"]
    bad = run(tid, edit)
    assert not bad["success"]
    findings = bad["verdict"]["facts"]["findings"]
    assert any(f["check"] == check and (rule is None or f.get("rule") == rule) for f in findings), (
        findings
    )
    if rule is not None and check == "process":
        assert all(isinstance(f["step"], int) for f in findings if f.get("rule") == rule)


def test_do_nothing_fails_everywhere() -> None:
    for family, params in [
        DUP,
        ("fraud_hold", {"issue": "refund"}),
        ("wrong_identity", {"issue": "goodwill", "wrong": "zip"}),
    ]:
        info = run(task_id(family, 2, **params), lambda t, p: [p[-1]])
        assert info["verdict"]["reason"] == "no_change"
