"""The written expense policy: how each report must be decided, as a pure function.

The first rule that matches decides:

1. ``duplicate`` (reject): an earlier report in the batch (lower ``seq``) has the same
   employee, merchant, date, amount and currency.
2. ``missing_receipt`` (reject): no receipt and the amount in USD is above the receipt
   threshold.
3. ``over_limit`` (escalate): the amount in USD is above the category's limit.
4. ``within_policy`` (approve) for the amount in USD.

USD amounts are ``(amount_cents * usd_micros + 500000) // 1000000``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gymforge.verify.rules import Before, Match, NeverAfter, RequiresPrior, Rule
from gymforge.world.writes import WRITE_RULES

CATEGORIES = ("meals", "lodging", "travel", "supplies")
DECISIONS = ("approve", "reject", "escalate")
REASONS = ("within_policy", "duplicate", "missing_receipt", "over_limit")
WRITE_TOOLS = frozenset({"decide_report", "submit_batch"})

SYSTEM_PROMPT = """\
You are an expense clerk. Process every pending report of the batch, then submit the batch.
Read the policy limits (get_policy) and the exchange rates (get_rates) first, and read each \
report (get_report) before deciding it. Decide each report by the first rule that matches:
1. Reject as duplicate if an earlier report of the batch (lower seq) has the same employee, \
merchant, expense date, amount and currency.
2. Reject as missing_receipt if it has no receipt and its USD amount is above the receipt \
threshold.
3. Escalate as over_limit if its USD amount is above its category's limit.
4. Otherwise approve as within_policy, for its USD amount.
USD amount = (amount_cents * usd_micros + 500000) // 1000000, with the rate of the report's \
currency. decide_report takes approved_usd_cents (the USD amount when approving, 0 \
otherwise). Every write takes an idempotency_key: a fresh one per decision, reused only to \
retry that decision after an error; never resubmit a write that succeeded. When every \
report is decided, call submit_batch, then reply with a short summary."""

PROCESS_RULES: tuple[Rule, ...] = (
    RequiresPrior(
        Match("tool.decide_report", where={"effect": True}),
        Match("tool.get_report", where={"ok": True}),
        same=("report",),
        name="read_before_decide",
    ),
    Before(
        Match("tool.get_rates", where={"ok": True}),
        Match("tool.decide_report", where={"effect": True}),
        name="rates_before_decisions",
    ),
    Before(
        Match("tool.get_policy", where={"ok": True}),
        Match("tool.decide_report", where={"effect": True}),
        name="policy_before_decisions",
    ),
    NeverAfter(
        Match("tool.decide_report", where={"effect": True}),
        Match("tool.submit_batch", where={"effect": True}),
        name="nothing_after_submit",
    ),
    *WRITE_RULES,
)


def usd(amount_cents: int, usd_micros: int) -> int:
    return (amount_cents * usd_micros + 500_000) // 1_000_000


def decide(
    reports: Sequence[Mapping[str, Any]],
    rates: Mapping[str, int],
    limits: Mapping[str, int],
    receipt_threshold: int,
) -> dict[str, dict[str, Any]]:
    """The correct decision of every report, by id (plain dicts: the truth model validates
    them as ``Decision``s)."""
    seen: set[tuple[Any, ...]] = set()
    out: dict[str, dict[str, Any]] = {}
    for rep in sorted(reports, key=lambda r: r["seq"]):
        key = tuple(
            rep[k] for k in ("employee_id", "merchant", "expense_date", "amount_cents", "currency")
        )
        amount = usd(rep["amount_cents"], rates[rep["currency"]])
        if key in seen:
            verdict = ("reject", "duplicate")
        elif not rep["has_receipt"] and amount > receipt_threshold:
            verdict = ("reject", "missing_receipt")
        elif amount > limits[rep["category"]]:
            verdict = ("escalate", "over_limit")
        else:
            verdict = ("approve", "within_policy")
        seen.add(key)
        out[rep["id"]] = {"decision": verdict[0], "reason_code": verdict[1], "usd": amount}
    return out
