"""``support-desk``: billing disputes under a written policy, with a simulated customer.

The agent talks to a seeded customer (``ScriptedUser``; any ``Policy`` can play the customer
instead through ``user_policy``), verifies their identity, reads the account through
paginated and sometimes faulty tools, confirms each change, makes it with an idempotency
key, and closes the case with structured outcome codes. The verifier judges the final
database (expected rows, changed tables, policy facts), the action log (declarative
process rules), the outcome codes and the facts read before each (``unread_outcomes``);
never the text of a reply.
"""

from __future__ import annotations

import random
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.support_desk.families import FAMILIES, SPLIT, TRAIN_FAMILIES
from gymforge.envs.support_desk.policy import (
    PROCESS_RULES,
    SYSTEM_PROMPT,
    WRITE_TOOLS,
    outcome_codes,
    policy_checks,
    unread_outcomes,
)
from gymforge.envs.support_desk.redteam import REDTEAM
from gymforge.envs.support_desk.schema import SCHEMA
from gymforge.envs.support_desk.tools import DeskTools
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.reward.process import RuleCredit
from gymforge.tasks import TaskSource
from gymforge.tools import FaultPlan
from gymforge.verify import Verdict
from gymforge.verify.rules import check_rules
from gymforge.world.db import TemplateCache, WorldDB
from gymforge.world.render import RENDERER_VERSION, money
from gymforge.world.sim import Persona, PolicyUser, ScriptedUser, Slot, UserSimulator
from gymforge.world.verify import Expect, Finding, effect_findings, from_violations, verdict_of
from gymforge.world.writes import WorldFaults

ASK_IDENTITY = (
    "Before I look at your account, please tell me the email address and ZIP code on file."
)
ASK_CHARGE = "Which charge would you like refunded? Please give me its amount and date."
GOODBYE = "Your case is now closed. Thank you for contacting us, goodbye."
READS = frozenset(
    {
        "get_account",
        "list_payments",
        "list_invoices",
        "get_invoice",
        "list_credits",
        "list_payment_methods",
    }
)


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


class SupportDeskEnv(DeskTools):
    spec = EnvSpec(
        "support-desk",
        "1.3.0",
        renderer_version=RENDERER_VERSION,
        description="Billing disputes: identity, refunds, credits, escalations, fraud holds.",
    )
    schema = SCHEMA
    templates = TemplateCache(256)
    tasks = TaskSource.of(FAMILIES, SPLIT)
    budget = Budget(max_steps=40, max_tokens=24_000)
    system_prompt = SYSTEM_PROMPT
    qa = QAProfile(
        verifier_kinds=("state",),
        redteam=REDTEAM,
        baselines=Baselines(oracle_min=0.99, bad_max=0.05, noop_max=0.0),
        # QA times cold resets (each a fresh task to generate and load); warm resets are
        # ~0.3 ms (benchmarks/world_reset.py)
        throughput=ThroughputBudget(reset_p50_ms=12.0, steps_per_s=800.0),
        family_weights={f: 1.0 for f in TRAIN_FAMILIES},
    )

    # ---- episode setup --------------------------------------------------------------------
    def process_credit(self) -> RuleCredit:
        """Each broken process rule costs 0.05 at the step where it breaks (``process``)."""
        return RuleCredit(PROCESS_RULES, penalty=-0.05)

    def make_user(self, task: Task, r: random.Random) -> UserSimulator:
        p = self.truth_of(task).persona
        persona = Persona(
            name=p.name,
            tone=p.tone,
            opening=p.opening,
            slots=tuple(
                Slot(s["name"], s["value"], tuple(s["keywords"]), s.get("say", "")) for s in p.slots
            ),
            nudge=p.nudge,
        )
        if self.user_policy is not None:
            return PolicyUser(self.user_policy(), persona)
        return ScriptedUser(persona, r)

    def user_stop(self) -> str | None:
        case = self.db.get("cases", self.truth.case_id) if self.task else None
        return "resolved" if case is not None and case["status"] == "closed" else None

    def fault_plan(self, task: Task) -> FaultPlan:
        rate = float(task.params["fault_rate"])
        forced: tuple[tuple[str, int, Any], ...] = ()
        if self.truth_of(task).outage:
            forced = (("list_payments", 0, "timeout"), ("get_account", 0, "empty"))
        return FaultPlan(
            rates={"timeout": rate / 3, "empty": rate / 3, "stale": rate / 3},
            tools=READS,
            forced=forced,
        )

    def world_faults(self, task: Task) -> WorldFaults:
        rate = float(task.params["fault_rate"])
        forced: tuple[tuple[str, int, Any], ...] = ()
        if self.truth_of(task).outage:
            forced = (
                ("issue_refund", 0, "commit_timeout"),
                ("apply_credit", 0, "commit_timeout"),
                ("verify_identity", 0, "rate_limited"),
            )
        return WorldFaults(
            commit_timeout=rate, rate_limited=rate / 2, tools=READS | WRITE_TOOLS, forced=forced
        )

    # ---- the oracle -----------------------------------------------------------------------
    def oracle_plan(self, task: Task) -> list[Action]:
        """Take the case, identity, reads, one confirmation per change, keyed writes, close,
        goodbye."""
        t = self.truth_of(task)
        case, cust, acct = t.case_id, t.customer_id, t.account_id
        methods = {m["id"]: m for m in t.world["payment_methods"]}
        ident = t.identity
        plan: list[Action] = [
            call("get_case", case_id=case),
            call("take_case", case_id=case, idempotency_key=f"{case}-take"),
            Reply(text=ASK_IDENTITY),
            call("verify_identity", customer_id=cust, email=ident["email"], zip_code=ident["zip"]),
        ]
        version = 2  # the case starts at version 1; taking it is a change
        if ident["valid"]:
            plan.append(call("get_account", customer_id=cust))
        if ident["valid"] and not t.fraud:
            issues = t.issues
            if any(i["kind"] == "refund" for i in issues):
                plan.append(Reply(text=ASK_CHARGE))
            plan += [
                call("list_payments", account_id=acct, page=p)
                for p in range(1, t.payment_pages + 1)
            ]
            if any(i["kind"] in ("goodwill", "over_limit") for i in issues):
                plan.append(call("list_credits", account_id=acct))
            for n, issue in enumerate(issues):
                key = f"{case}-{n}-{issue['kind']}"
                if (rf := issue.get("refund")) is not None:
                    last4 = methods[rf["method_id"]]["last4"]
                    plan += [
                        Reply(
                            text=f"I will refund {money(rf['amount_cents'])} for payment "
                            f"{rf['payment_id']} to your method ending {last4}. Do you confirm?"
                        ),
                        call(
                            "issue_refund",
                            case_id=case,
                            **rf,
                            reason=issue["kind"],
                            idempotency_key=key,
                        ),
                    ]
                elif (cr := issue.get("credit")) is not None:
                    amount = cr["amount_cents"]
                    plan += [
                        Reply(
                            text=f"I will apply a goodwill credit of {money(amount)}. "
                            "Do you confirm?"
                        ),
                        call(
                            "apply_credit",
                            case_id=case,
                            account_id=acct,
                            amount_cents=amount,
                            reason="goodwill",
                            idempotency_key=key,
                        ),
                    ]
                elif (esc := issue.get("escalation")) is not None:
                    plan += [
                        Reply(
                            text=f"A credit of {money(esc['amount_cents'])} is above what I can "
                            "approve, so I will escalate it to a billing supervisor. "
                            "Do you confirm?"
                        ),
                        call(
                            "escalate_case",
                            case_id=case,
                            **esc,
                            reason="over limit",
                            idempotency_key=key,
                        ),
                    ]
                    version += 1
        plan += [
            call(
                "close_case",
                case_id=case,
                outcome_codes=t.codes,
                expected_version=version,
                idempotency_key=f"{case}-close",
            ),
            Reply(text=GOODBYE),
        ]
        return plan

    # ---- the verifier ---------------------------------------------------------------------
    def expected(self, task: Task) -> Expect:
        t = self.truth_of(task)
        case = t.case_id
        issues = t.issues if t.identity["valid"] and not t.fraud else []
        return Expect(
            added={
                "refunds": [{**r, "case_id": case} for i in issues if (r := i.get("refund"))],
                "credits": [{**c, "case_id": case} for i in issues if (c := i.get("credit"))],
                "escalations": [
                    {**e, "case_id": case} for i in issues if (e := i.get("escalation"))
                ],
            },
            updated={"cases": {case: {"status": "closed"}}},
            touched=frozenset({"audit_log"}),
        )

    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        t = self.truth_of(task)
        diff = world.diff()
        findings = effect_findings(diff, self.expected(task))
        findings += policy_checks(world, diff, t.now)
        findings += from_violations(check_rules(PROCESS_RULES, self.log))
        codes = outcome_codes(world.get("cases", t.case_id))
        findings += unread_outcomes(self.log, codes, t.account_id, t.issues, t.customer_id)
        if codes != sorted(t.codes):
            findings.append(
                Finding("outcome", f"outcome codes {codes}, expected {sorted(t.codes)}")
            )
        facts = {
            "changed": diff.as_json(),
            "outcome_codes": codes,
            "expected_codes": sorted(t.codes),
            "user_stop": self.user_stop() or (self.user.stop_reason if self.user else None),
        }
        return verdict_of(findings, verifier="support-desk.state@1", facts=facts)
