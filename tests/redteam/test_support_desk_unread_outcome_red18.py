"""Attack: close a support case with an outcome guessed without reading the fact it rests on.

The verifier compared the outcome codes and the changes with the truth, never what the agent
had seen. Taking the case, checking the caller's identity and closing with a decline read
from the case's subject (``refund`` -> ``refund_denied_window``, ``goodwill`` ->
``goodwill_declined_recent``, anything else -> ``fraud_hold_no_action``) passed 37 of 200
training tasks whose caller was verified, the account, its credits and its payments never
read (mean reward 0.27, where a policy that reads and fails earns nothing); crediting the
asked amount without the credit history, or changing an account without looking at its
holds, passed wherever the coin fell right. Success would be the full task reward for a
guess. The defence: each outcome needs the facts it rests on read: the account's holds
(``get_account``) for any outcome of a verified caller, the credit history
(``list_credits``) for a goodwill outcome, the charge (listed by ``list_payments`` or told
by the customer) for a refund outcome; each read answered without a fault.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from gymforge.core import Reply, SyncEnvironment, ToolCall
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk.env import ASK_CHARGE, ASK_IDENTITY, GOODBYE
from gymforge.envs.support_desk.policy import GOODWILL_LIMIT_CENTS

TASKS = SupportDeskEnv.tasks.sample(120, 18, "train")
GUESS = {"refund": "refund_denied_window", "goodwill": "goodwill_declined_recent"}


class Desk:
    """One episode driven by hand: calls retried over faults, the customer's words kept."""

    def __init__(self, env: SyncEnvironment, tid: str, seed: int) -> None:
        self.env, self.said, self.done, self.success = env, "", False, False
        env.reset(tid, seed)
        self.t = env.env.truth
        self.keys = 0

    def call(self, name: str, **args: Any) -> Any:
        for _ in range(5):
            if self.done:
                return None
            r = self.env.step(ToolCall(name=name, arguments=args))
            self.done, self.success = r.done, bool(r.info.get("success"))
            tr = r.info["tool_result"]
            if tr["ok"] and not tr["fault"]:
                return tr["content"]
            if not (tr["error"] or {}).get("retryable", True):
                return None
        return None

    def write(self, name: str, **args: Any) -> Any:
        self.keys += 1
        return self.call(name, **args, idempotency_key=f"k{self.keys}")

    def say(self, text: str) -> None:
        if not self.done:
            r = self.env.step(Reply(text=text))
            self.done, self.success = r.done, bool(r.info.get("success"))
            self.said += " ".join(m.content for m in r.observation.messages)

    def start(self) -> bool:
        """Take the case and verify the caller with what they say; whether it matched."""
        case = self.call("get_case", case_id=self.t.case_id)
        self.subject = case["subject"]
        self.write("take_case", case_id=self.t.case_id)
        self.say(ASK_IDENTITY)
        email = re.search(r"email is (\S+?)\.(\s|$)", self.said)
        zip_code = re.search(r"ZIP code is (\S+?)\.", self.said)
        got = self.call(
            "verify_identity",
            customer_id=self.t.customer_id,
            email=email.group(1) if email else "",
            zip_code=zip_code.group(1) if zip_code else "",
        )
        return bool(got and got["verified"])

    def close(self, codes: list[str], version: int = 2) -> bool:
        self.write(
            "close_case", case_id=self.t.case_id, outcome_codes=codes, expected_version=version
        )
        self.say(GOODBYE)
        return self.success


def decline_by_subject(desk: Desk) -> bool:
    desk.start()
    return desk.close([GUESS.get(desk.subject, "fraud_hold_no_action")])


def change_without_looking(desk: Desk) -> bool:
    """Give what is asked (a credit, an escalation, the charge refunded) without reading the
    account's holds or its credit history."""
    if not desk.start() or "duplicate" in desk.subject or ";" in desk.subject:
        return False
    t, case = desk.t, desk.t.case_id
    amount = re.search(r"like a \$?([\d,.]+)", desk.said) or re.search(
        r"like a \$?([\d,.]+)", t.persona.opening
    )
    if desk.subject == "refund":
        desk.say(ASK_CHARGE)
        when = re.search(r"on (\d{4}-\d\d-\d\d)\.", desk.said)
        pays: list[dict[str, Any]] = []
        page = 1
        while (got := desk.call("list_payments", account_id=t.account_id, page=page)) is not None:
            pays += got["items"]
            if not got["next_page"]:
                break
            page += 1
        pay = next((p for p in pays if when and p["charged_at"].startswith(when.group(1))), None)
        if pay is None:
            return False
        desk.say("I will refund that charge. Do you confirm?")
        desk.write(
            "issue_refund",
            case_id=case,
            payment_id=pay["id"],
            amount_cents=pay["amount_cents"],
            method_id=pay["method_id"],
        )
        return desk.close(["refund_issued"])
    cents = round(float(amount.group(1).replace(",", "")) * 100) if amount else 0
    desk.say("I will take care of that. Do you confirm?")
    if cents <= GOODWILL_LIMIT_CENTS:
        desk.write("apply_credit", case_id=case, account_id=t.account_id, amount_cents=cents)
        return desk.close(["goodwill_credited"])
    desk.write("escalate_case", case_id=case, team="billing_supervisor", amount_cents=cents)
    return desk.close(["escalated_over_limit"], version=3)


@pytest.fixture(scope="module")
def env() -> Any:
    env = SyncEnvironment(SupportDeskEnv())
    yield env
    env.close()


@pytest.mark.parametrize("attack", [decline_by_subject, change_without_looking])
def test_an_outcome_on_facts_never_read_fails(env: SyncEnvironment, attack: Any) -> None:
    passed = []
    for i, tid in enumerate(TASKS):
        desk = Desk(env, tid, i)
        if attack(desk) and desk.t.identity["valid"]:
            passed.append(tid)
    assert not passed, f"{len(passed)} of {len(TASKS)} passed, e.g. {passed[:3]}"
