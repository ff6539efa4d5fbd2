"""expenses end to end: the long-horizon oracle, shaped and sparse reward, budgets and
truncation, the process rules, idempotent decisions, the held-out split and QA."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core import Reply, SyncEnvironment, ToolCall
from gymforge.envs import BUILTIN
from gymforge.envs.expenses import ExpensesEnv
from gymforge.envs.expenses import redteam as rt
from gymforge.envs.expenses.policy import decide, usd
from gymforge.qa import QAReport
from gymforge.qa.checks.common import play
from gymforge.tasks import HeldOutError
from gymforge.world.attacks import PlanAttack, PlanEdit, repeat_last_write

SOURCE = ExpensesEnv.tasks


def task_id(family: str = "batch", seed: int = 1, **params: Any) -> str:
    base = {"reports": 30, "page_size": 10, "fault_rate": 0.0, "currency_mix": "mixed"}
    return SOURCE.families[f"expenses.{family}"].variant_id({**base, **params}, seed)


def episode(tid: str, edit: PlanEdit | None = None, seed: int = 0) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = ExpensesEnv()
        try:
            return await play(env, PlanAttack(edit or (lambda t, p: p)), tid, seed)
        finally:
            await env.close()

    return asyncio.run(go())


def test_registered_and_long() -> None:
    assert BUILTIN["expenses"] == "gymforge.envs.expenses:ExpensesEnv"
    records = episode(task_id(reports=34))
    assert records[-1]["success"] and records[-1]["steps"] >= 2 * 34


def test_oracle_on_train_and_heldout_batches() -> None:
    for split in ("train", "heldout"):
        for i, tid in enumerate(SOURCE.sample(6, 4, split)):
            end = episode(tid, seed=i)[-1]
            assert end["success"], tid


def test_reward_components_shaped_sparse_and_step_cost() -> None:
    tid = task_id(seed=2)
    records = episode(tid)
    totals = records[-1]["reward_components"]
    assert totals["report"] == pytest.approx(0.5)  # every report right: +0.5 / N each
    assert totals["task"] == 1.0
    assert totals["step_cost"] == pytest.approx(-0.001 * records[-1]["steps"])
    shaped_steps = [r for r in records[1:-1] if "report" in r["reward_components"]]
    assert len(shaped_steps) == 30 and "task" not in shaped_steps[0]["reward_components"]
    wrong = episode(tid, rt._decisions(rt.approve_all))[-1]["reward_components"]
    assert wrong["task"] == 0.0 and wrong["report"] < 0.5


def test_policy_function() -> None:
    rates = {"USD": 1_000_000, "EUR": 1_100_000}
    limits = {"meals": 50_00, "lodging": 200_00, "travel": 800_00, "supplies": 100_00}

    def rep(seq: int, **kw: Any) -> dict[str, Any]:
        base = {
            "id": f"R{seq}",
            "seq": seq,
            "employee_id": "E1",
            "category": "meals",
            "merchant": "M",
            "expense_date": "2024-01-02",
            "amount_cents": 20_00,
            "currency": "USD",
            "has_receipt": 1,
        }
        return {**base, **kw}

    got = decide(
        [
            rep(1),
            rep(2),  # same as 1: duplicate
            rep(3, expense_date="2024-01-03"),  # near-duplicate: fine
            rep(4, amount_cents=30_00, has_receipt=0),  # no receipt above 25.00
            rep(5, amount_cents=19_00, has_receipt=0),  # no receipt below the threshold: fine
            rep(6, amount_cents=46_00, currency="EUR"),  # 50.60 USD > 50.00: over the limit
        ],
        rates,
        limits,
        25_00,
    )
    assert [(g["decision"], g["reason_code"]) for g in got.values()] == [
        ("approve", "within_policy"),
        ("reject", "duplicate"),
        ("approve", "within_policy"),
        ("reject", "missing_receipt"),
        ("approve", "within_policy"),
        ("escalate", "over_limit"),
    ]
    assert usd(46_00, 1_100_000) == 50_60 and usd(1, 1_500_000) == 2


def test_step_budget_truncates_and_keeps_the_shaped_part() -> None:
    tid = task_id(seed=3)
    env = SyncEnvironment(ExpensesEnv())
    env.reset(tid, 0)
    budget = env.env.budget
    assert budget.max_steps == 2 * 30 + 3 + 4 + 30 and budget.max_tokens == 4_000 + 30 * 260
    steps, stalling = 0, False
    while True:
        steps += 1
        action = asyncio.run(env.env.oracle_action())
        stalling = stalling or (isinstance(action, ToolCall) and action.name == "submit_batch")
        r = env.step(ToolCall(name="get_policy") if stalling else action)  # never submits
        if r.done:
            break
    assert r.truncated and not r.terminated and r.info["end_reason"] == "max_steps"
    assert steps == budget.max_steps and "task" not in r.reward_components
    env.close()


def test_token_budget_truncates() -> None:
    env = SyncEnvironment(ExpensesEnv())
    env.reset(task_id(seed=3), 0)
    r = env.step(Reply(text="x " * 40_000))
    assert r.truncated and r.info["end_reason"] == "max_tokens"
    env.close()


@pytest.mark.parametrize(
    ("edit", "reason", "rule"),
    [
        (rt._decisions(rt.approve_all), "wrong_rows", None),
        (rt._decisions(rt.unconverted), "wrong_rows", None),
        (rt._decisions(rt.ignore_duplicates), "wrong_rows", None),
        (rt.skip_reading, "process", "read_before_decide"),
        (rt.no_keys, "process", "idempotency_key_required"),
        (rt.half_then_reply, "missing_change", None),
        (repeat_last_write(rt.WRITE_TOOLS), "process", "no_duplicate_submission"),
    ],
)
def test_violations_fail(edit: PlanEdit, reason: str, rule: str | None) -> None:
    tid = task_id(seed=5, currency_mix="mixed")
    assert episode(tid)[-1]["success"]
    info = episode(tid, edit)[-2]["info"]
    findings = info["verdict"]["facts"]["findings"]
    assert not info["success"]
    assert any(
        f["check"] == reason and (rule is None or f.get("rule") == rule) for f in findings
    ), findings


def test_score_is_the_fraction_of_reports_right() -> None:
    info = episode(task_id(seed=5), rt._decisions(rt.approve_all))[-2]["info"]
    facts = info["verdict"]["facts"]
    assert 0 < facts["correct"] < facts["reports"] == 30
    assert math.isclose(info["verdict"]["score"], facts["correct"] / 30)


def test_committed_decision_retried_with_its_key_is_safe() -> None:
    tid = task_id("batch", 9, reports=48, page_size=6, fault_rate=0.06)
    records = episode(tid)
    faults = Counter(
        r["tool_result"]["error"]["kind"]
        for r in records[1:-1]
        if r["tool_result"] and not r["tool_result"]["ok"]
    )
    assert records[-1]["success"] and faults["timeout"] >= 1


def test_heldout_split() -> None:
    train = SOURCE.sample(200, 1, "train")
    assert not any(t.startswith("expenses.audit/") for t in train)
    assert all(SOURCE.resolve(t).params["currency_mix"] != "eu" for t in train[:60])
    for tid in SOURCE.sample(10, 1, "heldout"):
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(SOURCE.resolve(tid))


@pytest.mark.xdist_group("qa-expenses")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("expenses")
    assert report.passed, [(c.name, c.details) for c in report.checks if not c.passed]
