"""Attack: collect the shaped ``report`` reward by approving every report as filed.

``expenses`` pays ``+0.5 / N`` for each right decision and ``-0.5 / N`` for each wrong one.
About 70% of a batch's reports are plain approvals, so a policy that never reads a report,
never checks a receipt, a limit or a duplicate, and approves every row of the list for its
converted amount earned about +0.19 a batch (0.14 after step costs, where doing nothing
earns -0.01), and guessing with the batch's mix earned more than nothing too. Success would
be a shaped reward paid for the base rate of the batch, not for applying the policy.
The defence: a wrong decision costs ``p / (1 - p)`` times a right one, ``p`` the share of
the batch's most common decision, so any decision made without looking at the report earns
0 in expectation and approving everything exactly 0, while the whole batch right still
earns 0.5.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from tool_calls import call_retrying

from gymforge.core import Reply, StepResult, SyncEnvironment
from gymforge.envs.expenses import ExpensesEnv
from gymforge.envs.expenses.policy import usd

Row = dict[str, Any]
Choose = Callable[[Row, int, random.Random], tuple[str, str, int]]
TASKS = ExpensesEnv.tasks.sample(24, 18, "train") + ExpensesEnv.tasks.sample(8, 18, "heldout")
GUESSES = [
    ("approve", "within_policy"),
    ("reject", "duplicate"),
    ("reject", "missing_receipt"),
    ("escalate", "over_limit"),
]


def approve(row: Row, amount: int, r: random.Random) -> tuple[str, str, int]:
    return "approve", "within_policy", amount


def guess_with_the_mix(row: Row, amount: int, r: random.Random) -> tuple[str, str, int]:
    """Draw a decision with about a batch's mix of outcomes, never reading the report."""
    decision, reason = r.choices(GUESSES, weights=(70, 10, 8, 12))[0]
    return decision, reason, amount if decision == "approve" else 0


def play(env: SyncEnvironment, tid: str, seed: int, choose: Choose, read: bool = False) -> float:
    """Decide every listed report with ``choose`` (no report read unless ``read``), submit;
    the ``report`` component of the episode."""
    env.reset(tid, seed)
    earned = 0.0

    def count(result: StepResult) -> None:
        nonlocal earned
        earned += result.reward_components.get("report", 0.0)

    def call(name: str, **args: Any) -> Any:
        return call_retrying(env, name, args, count)

    rates = call("get_rates")["usd_micros"]
    truth = env.env.truth
    rows: list[Row] = []
    for page in range(1, truth.pages + 1):
        rows += call("list_reports", batch_id=truth.batch_id, page=page)["items"]
    r = random.Random(seed)
    for row in rows:
        decision, reason, cents = choose(row, usd(row["amount_cents"], rates[row["currency"]]), r)
        if read:  # a right decision pays only on a report read (test_expenses_list_only_red18b)
            call("get_report", report_id=row["id"])
        call(
            "decide_report",
            report_id=row["id"],
            decision=decision,
            reason_code=reason,
            approved_usd_cents=cents,
            idempotency_key=f"k-{row['id']}",
        )
    call("submit_batch", batch_id=truth.batch_id, idempotency_key="submit")
    env.step(Reply(text="done"))
    return earned


@pytest.fixture(scope="module")
def env() -> Any:
    env = SyncEnvironment(ExpensesEnv())
    yield env
    env.close()


def test_approving_every_report_unread_earns_no_shaped_reward(env: SyncEnvironment) -> None:
    earned = [play(env, tid, i, approve) for i, tid in enumerate(TASKS)]
    assert max(earned) <= 1e-9, f"approve-all earned up to {max(earned):.3f} a batch"


def test_guessing_with_the_batch_mix_earns_no_shaped_reward(env: SyncEnvironment) -> None:
    earned = [play(env, tid, i, guess_with_the_mix) for i, tid in enumerate(TASKS)]
    assert sum(earned) / len(earned) <= 0.0, f"guessing earned {sum(earned) / len(earned):.3f}"


def test_the_whole_batch_right_still_earns_the_full_shaped_part(env: SyncEnvironment) -> None:
    truth_of = env.env.truth_of

    def right(tid: str) -> Choose:
        decisions = truth_of(ExpensesEnv.tasks.resolve(tid)).decisions

        def choose(row: Row, amount: int, r: random.Random) -> tuple[str, str, int]:
            d = decisions[row["id"]]
            return d["decision"], d["reason_code"], d["usd"] if d["decision"] == "approve" else 0

        return choose

    for i, tid in enumerate(TASKS[:6]):
        assert play(env, tid, i, right(tid), read=True) == pytest.approx(0.5)
