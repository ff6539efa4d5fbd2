"""Attack: collect the shaped ``report`` reward from the report list alone, never opening one.

``expenses`` charges a wrong decision ``p / (1 - p)`` right ones (``report_weights``), so a
decision that does not depend on the report earns at most 0 in expectation. But the list
(``list_reports``) shows the employee, merchant, date, amount and currency of every report:
duplicates can be told apart in it, a merchant names its category, and with the policy
numbers and the rates the amount says whether a limit or the receipt threshold bites. Only
the receipt is missing, and 85% of reports have one. A policy that reads the policy, the
rates and the list and then decides every report without ever calling ``get_report``
(duplicate if an earlier row matches, over_limit above the category's limit, else approve)
earned +0.33 a batch of the 0.5 shaped part (train and held-out, 100 batches): as much as
an honest policy that reads every report and decides 90% of them right (+0.33), and more
after step costs (+0.28 against +0.24), so a policy trained on the shaped reward had no
reason to open a report. Deciding only the rows the list settles (duplicates, amounts under
both the limit and the receipt threshold) and stopping earned +0.12 with no wrong decision.
Success is a positive shaped reward for decisions on reports never read. The defence: a
right decision pays only on a report the agent read (``get_report``, answered without a
fault) earlier in the episode; a wrong one is charged either way.
"""

from __future__ import annotations

from typing import Any

import pytest
from tool_calls import call_retrying

from gymforge.core import Reply, StepResult, SyncEnvironment
from gymforge.envs.expenses import ExpensesEnv
from gymforge.envs.expenses.policy import usd
from gymforge.envs.expenses.scenarios import MERCHANTS

CATEGORY = {m: c for c, names in MERCHANTS.items() for m in names}
TASKS = ExpensesEnv.tasks.sample(24, 18, "train") + ExpensesEnv.tasks.sample(8, 18, "heldout")
KEY = ("employee_id", "merchant", "expense_date", "amount_cents", "currency")


def play(env: SyncEnvironment, tid: str, seed: int, *, sure_only: bool, read: bool) -> float:
    """Decide from the list (reading each report first when ``read``); the episode's
    ``report`` component."""
    env.reset(tid, seed)
    earned = 0.0

    def count(result: StepResult) -> None:
        nonlocal earned
        earned += result.reward_components.get("report", 0.0)

    def call(name: str, **args: Any) -> Any:
        return call_retrying(env, name, args, count)

    policy = call("get_policy")
    rates = call("get_rates")["usd_micros"]
    truth = env.env.truth
    rows: list[dict[str, Any]] = []
    for page in range(1, truth.pages + 1):
        rows += call("list_reports", batch_id=truth.batch_id, page=page)["items"]
    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        key = tuple(row[k] for k in KEY)
        amount = usd(row["amount_cents"], rates[row["currency"]])
        limit = policy["limits_usd_cents"][CATEGORY[row["merchant"]]]
        threshold = policy["receipt_threshold_usd_cents"]
        duplicate = key in seen
        seen.add(key)
        if sure_only and not (duplicate or amount <= min(limit, threshold)):
            continue
        if duplicate:
            decision, reason = "reject", "duplicate"
        elif amount > limit:
            decision, reason = "escalate", "over_limit"
        else:
            decision, reason = "approve", "within_policy"
        if read:
            call("get_report", report_id=row["id"])
        call(
            "decide_report",
            report_id=row["id"],
            decision=decision,
            reason_code=reason,
            approved_usd_cents=amount if decision == "approve" else 0,
            idempotency_key=f"k-{row['id']}",
        )
    if not sure_only:
        call("submit_batch", batch_id=truth.batch_id, idempotency_key="submit")
    env.step(Reply(text="done"))
    return earned


@pytest.fixture(scope="module")
def env() -> Any:
    env = SyncEnvironment(ExpensesEnv())
    yield env
    env.close()


@pytest.mark.parametrize("sure_only", [False, True], ids=["every_row", "rows_the_list_settles"])
def test_deciding_from_the_list_unread_earns_no_shaped_reward(
    env: SyncEnvironment, sure_only: bool
) -> None:
    earned = [play(env, t, i, sure_only=sure_only, read=False) for i, t in enumerate(TASKS)]
    assert max(earned) <= 1e-9, (
        f"up to {max(earned):.3f} a batch, {sum(earned) / len(earned):.3f} mean"
    )


def test_the_same_decisions_on_reports_read_are_paid(env: SyncEnvironment) -> None:
    earned = [play(env, t, i, sure_only=True, read=True) for i, t in enumerate(TASKS[:8])]
    assert min(earned) > 0.0
