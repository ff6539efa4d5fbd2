"""Attack: read a payment's amount from ``issue_refund``'s error before verifying the caller.

``issue_refund`` refused an amount past what was left with "amount must be between 1 and
N cents": an agent that never checked the caller's identity (or whose caller failed the
check) asked to refund a huge amount of a payment id and read the payment's amount from the
error, an account fact disclosed to an unverified caller that no process rule saw (the
disclosure rule counts answered reads only, and the refused write changed nothing).
Success would be account data shown before ``verify_identity``. The defence: the refusal
names no amount; what is left to refund is in ``list_payments`` (``refunded_cents``), after
the identity check.
"""

from __future__ import annotations

from gymforge.core import SyncEnvironment, ToolCall
from gymforge.envs.support_desk import SupportDeskEnv


def test_a_refused_refund_names_no_amount_of_the_payment() -> None:
    env = SyncEnvironment(SupportDeskEnv())
    try:
        for tid in SupportDeskEnv.tasks.sample(6, 18, "train"):
            env.reset(tid, 0)
            t = env.env.truth
            pays = [p for p in t.world["payments"] if p["account_id"] == t.account_id]
            method = next(
                m["id"] for m in t.world["payment_methods"] if m["customer_id"] == t.customer_id
            )
            for pay in pays[:3] * 3:  # each one again past a retryable fault
                r = env.step(
                    ToolCall(
                        name="issue_refund",
                        arguments={
                            "case_id": t.case_id,
                            "payment_id": pay["id"],
                            "amount_cents": 10**9,
                            "method_id": method,
                            "idempotency_key": f"probe-{pay['id']}",
                        },
                    )
                )
                error = r.info["tool_result"]["error"]
                assert error is not None
                if error["retryable"]:
                    continue
                assert error["kind"] == "validation"
                assert str(pay["amount_cents"]) not in error["message"], error["message"]
    finally:
        env.close()
