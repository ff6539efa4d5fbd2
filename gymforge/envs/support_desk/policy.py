"""The support desk's written policy: the system prompt, and how the verifier enforces it.

Some rules are enforced by the tools too (a credit beyond the agent's authority is refused,
a closed case takes no changes), most only by the verifier, as in a real desk where the
tools let an agent break policy and an audit catches it:

- ``policy_checks``: facts of the final state (a refund outside the window or to another
  method, an over-limit or second goodwill credit in a year, any action under a fraud hold);
- ``PROCESS_RULES``: declarative rules over the action log (identity before disclosure and
  before any change, one confirmation per change, no duplicate submissions, nothing after
  closing, no action once the hold was seen);
- ``unread_outcomes``: each outcome the case is closed with rests on facts the agent read
  first (the account's holds, its credit history, the charge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gymforge.verify.rules import AtMost, Event, Match, NeverAfter, RequiresPrior, Rule
from gymforge.world.clock import epoch
from gymforge.world.db import Diff, WorldDB
from gymforge.world.render import money
from gymforge.world.verify import Finding
from gymforge.world.writes import WRITE_RULES

DAY = 86_400
REFUND_WINDOW_DAYS = 60
GOODWILL_LIMIT_CENTS = 50_00
GOODWILL_PERIOD_DAYS = 365
AUTHORITY_CENTS = 200_00
TEAMS = ("billing_supervisor", "fraud")
WRITE_TOOLS = frozenset(
    {"take_case", "issue_refund", "apply_credit", "escalate_case", "close_case"}
)

OUTCOMES = {
    "duplicate_refunded": "a duplicate charge was refunded in full",
    "refund_issued": "a refund inside the window was issued",
    "refund_denied_window": "a refund was declined: the charge is outside the window",
    "goodwill_credited": "a goodwill credit within the limit was applied",
    "goodwill_declined_recent": "a goodwill credit was declined: one was given within a year",
    "escalated_over_limit": "a request above the goodwill limit was escalated",
    "fraud_hold_no_action": "no action: the account is under a fraud hold",
    "identity_not_verified": "no action: the caller's identity could not be verified",
}

SYSTEM_PROMPT = f"""\
You are a billing support agent. The customer talks to you through your replies; use the \
tools to read and change their account. Take the case (take_case) before working on it. \
Policy:
1. Identity first. Before you look up or disclose anything about an account, ask the \
customer for the email address and ZIP code on file and check them with verify_identity. \
If they do not match, do not disclose or change anything: close the case with \
identity_not_verified.
2. Confirm every change. Before each refund, credit or escalation, describe it to the \
customer in a message of its own and ask them to confirm; one yes covers one change. \
Closing the case needs no confirmation.
3. Refunds only for charges made within the last {REFUND_WINDOW_DAYS} days, and only to the \
payment method that was charged. Older charges are declined (refund_denied_window).
4. A duplicate charge (an invoice paid twice) gets a full refund of the later payment \
(duplicate_refunded).
5. Goodwill credits up to {money(GOODWILL_LIMIT_CENTS)} at most once per \
{GOODWILL_PERIOD_DAYS} days per account (goodwill_credited); if the account already had one \
in that period, decline (goodwill_declined_recent). A request above the limit is never \
credited: escalate it to billing_supervisor with the requested amount \
(escalated_over_limit).
6. No refund, credit or escalation at all while the account is under a fraud hold \
(fraud_hold_no_action).
7. Writes take an idempotency_key: use a fresh key per intended change and reuse it only to \
retry that change after an error. Never resubmit a change that already succeeded.
8. When done, close the case with close_case, listing one outcome code per issue the \
customer raised, then say goodbye.
Outcome codes: {", ".join(OUTCOMES)}."""

CHANGE = Match("tool.*", where={"effect": True, "account_change": True})
VERIFIED = Match("tool.verify_identity", where={"verified": True})

PROCESS_RULES: tuple[Rule, ...] = (
    RequiresPrior(
        Match("tool.*", where={"discloses": True, "ok": True}),
        VERIFIED,
        same=("customer",),
        name="identity_before_disclosure",
    ),
    RequiresPrior(CHANGE, VERIFIED, same=("customer",), name="identity_before_change"),
    RequiresPrior(CHANGE, Match("user.confirm"), consume=True, name="confirm_before_change"),
    *WRITE_RULES,
    NeverAfter(
        Match("tool.*", where={"effect": True}),
        Match("tool.close_case", where={"effect": True}),
        name="nothing_after_close",
    ),
    NeverAfter(
        CHANGE, Match("tool.get_account", where={"hold": True}), name="no_action_under_hold"
    ),
    AtMost(
        1,
        Match("tool.apply_credit", where={"effect": True}),
        same=("account",),
        name="one_goodwill_credit",
    ),
    RequiresPrior(
        Match("tool.close_case", where={"effect": True}),
        Match("tool.verify_identity", where={"ok": True}),
        name="identity_checked_before_close",
    ),
    RequiresPrior(
        Match("tool.close_case", where={"effect": True}),
        Match("tool.take_case", where={"effect": True}),
        name="case_taken_before_close",
    ),
    RequiresPrior(
        Match("tool.verify_identity", where={"ok": True}),
        Match("user.reveal", where={"slot": "email"}),
        name="identity_details_from_customer",
    ),
    RequiresPrior(
        Match("tool.verify_identity", where={"ok": True}),
        Match("user.reveal", where={"slot": "zip"}),
        name="identity_details_from_customer",
    ),
)


def policy_checks(db: WorldDB, diff: Diff, now: str) -> list[Finding]:
    """Policy facts of the final state, independent of what the task expected."""
    out: list[Finding] = []
    t_now = epoch(now)

    def bad(rule: str, message: str) -> None:
        out.append(Finding("policy", message, rule=rule))

    refunded: dict[str, int] = {}
    for r in diff["refunds"].added:
        pay = db.get("payments", r["payment_id"])
        if pay is None:
            continue
        refunded[pay["id"]] = refunded.get(pay["id"], 0) + r["amount_cents"]
        if epoch(pay["charged_at"]) < t_now - REFUND_WINDOW_DAYS * DAY:
            bad("refund_window", f"refund of {pay['id']}, charged {pay['charged_at']}")
        if r["method_id"] != pay["method_id"]:
            bad("refund_original_method", f"refund of {pay['id']} to {r['method_id']}")
    for pid in sorted(refunded):
        pay = db.get("payments", pid)
        total = db.scalar(
            "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE payment_id = ?", pid
        )
        if pay is not None and total > pay["amount_cents"]:
            bad("refund_amount", f"{pid} refunded {money(total)} of {money(pay['amount_cents'])}")
    new_credits = [c for c in diff["credits"].added if c["kind"] == "goodwill"]
    for c in new_credits:
        if c["amount_cents"] > GOODWILL_LIMIT_CENTS:
            bad("goodwill_limit", f"goodwill credit of {money(c['amount_cents'])} above the limit")
        since = t_now - GOODWILL_PERIOD_DAYS * DAY
        earlier = [
            e
            for e in db.all(
                "SELECT * FROM credits WHERE account_id = ? AND kind = 'goodwill'", c["account_id"]
            )
            if e["id"] != c["id"]
            and epoch(e["created_at"]) >= since
            and e["created_at"] <= c["created_at"]
        ]
        if earlier:
            bad(
                "goodwill_once_per_year",
                f"second goodwill credit within a year on {c['account_id']}",
            )
    held = {a["id"] for a in db.all("SELECT id FROM accounts WHERE fraud_hold = 1")}
    acted = [c["account_id"] for c in diff["credits"].added] + [
        p["account_id"]
        for r in diff["refunds"].added
        if (p := db.get("payments", r["payment_id"])) is not None
    ]
    if diff["escalations"].added and held and _case_accounts(db, diff) & held:
        acted += sorted(_case_accounts(db, diff) & held)
    for account in sorted(set(acted) & held):
        bad("fraud_hold", f"action on {account} under a fraud hold")
    return out


def _case_accounts(db: WorldDB, diff: Diff) -> set[str]:
    cases = {e["case_id"] for e in diff["escalations"].added}
    return {
        a["id"]
        for case in cases
        if (c := db.get("cases", case)) is not None
        for a in db.all("SELECT id FROM accounts WHERE customer_id = ?", c["customer_id"])
    }


def outcome_codes(row: Mapping[str, Any] | None) -> list[str]:
    raw = (row or {}).get("outcome_codes") or ""
    return sorted(c for c in str(raw).split(",") if c)


CHARGE_OUTCOMES = frozenset({"duplicate_refunded", "refund_issued", "refund_denied_window"})
TOLD_CHARGE = frozenset({"refund_issued", "refund_denied_window"})  # the customer says which


def unread_outcomes(
    log: Sequence[Event],
    codes: Sequence[str],
    account_id: str,
    issues: Sequence[Mapping[str, Any]],
    customer_id: str,
) -> list[Finding]:
    """The outcomes ``codes`` the agent closed with before reading the facts they rest on:
    for ``identity_not_verified``, ``verify_identity`` of the case's customer with the details
    the caller gave (checking made-up ones, or another customer, always hears ``False``:
    tests/redteam/test_support_desk_identity_unchecked_red18b.py); the account's holds
    (``get_account``) for any outcome of a verified caller, its credit
    history (``list_credits``) for a goodwill outcome, the charge (a ``list_payments`` page
    that showed it, or, for a refund asked for, the customer naming it) for a refund
    outcome. A read counts when it answered without a fault, before the case was closed.
    Without this, closing with a decline guessed from the case's subject passed
    (tests/redteam/test_support_desk_unread_outcome_red18.py)."""
    seen: list[Event] = []
    for e in log:
        if e.name == "tool.close_case" and e.attrs.get("effect"):
            break
        if e.name.startswith("user.") or (e.attrs.get("ok") and not e.attrs.get("fault")):
            seen.append(e)

    def read(name: str, **attrs: Any) -> bool:
        return any(
            e.name == name and all(e.attrs.get(k) == v for k, v in attrs.items()) for e in seen
        )

    def shown(payment: Any) -> bool:
        return any(
            e.name == "tool.list_payments" and payment in e.attrs.get("shown", ()) for e in seen
        )

    out: list[Finding] = []

    def unread(code: str, what: str) -> None:
        out.append(Finding("process", f"{code} without {what} read first", rule="outcome_unread"))

    if "identity_not_verified" in codes and not read(
        "tool.verify_identity", customer=customer_id, verified=False, as_told=True
    ):
        msg = "identity_not_verified without the caller's own details checked for the customer"
        out.append(Finding("process", msg, rule="outcome_unread"))
    for code in sorted(set(codes) - {"identity_not_verified"}):
        if not read("tool.get_account", account=account_id):
            unread(code, "the account's holds")
        if code.startswith("goodwill_") and not read("tool.list_credits", account=account_id):
            unread(code, "the credit history")
        if code in CHARGE_OUTCOMES:
            told = code in TOLD_CHARGE and read("user.reveal", slot="charge")
            paid = [i.get("payment_id") for i in issues if i["code"] == code]
            if not told and not all(shown(p) for p in paid):
                unread(code, "the charge")
    return out
