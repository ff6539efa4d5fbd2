"""``expenses``: a long-horizon batch of expense reports under a written policy.

The agent reads the policy numbers and the rate table, pages through 30 to 60 reports,
reads and decides each one (approve for the converted USD amount, reject as a duplicate or
for a missing receipt, escalate over the limit), then submits the batch: 70 to 150 steps.

Reward components: ``report`` (shaped, on each decision that takes effect: +0.5 / N for a
right decision on a report read first, -0.5 / N * p / (1 - p) for a wrong one, ``p`` the
share of the batch's most common outcome, so deciding without looking earns nothing in
expectation and the shaped total is at most 0.5: ``tools.report_weights``), ``task``
(sparse: the whole batch right and submitted, under the process rules) and ``step_cost``.
Each episode gets a step and a token budget sized to its batch; running out is truncation,
and the ``report`` components earned so far stay in the log.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.expenses.policy import PROCESS_RULES, SYSTEM_PROMPT
from gymforge.envs.expenses.redteam import REDTEAM
from gymforge.envs.expenses.scenarios import FAMILIES, SPLIT, TRAIN_FAMILIES
from gymforge.envs.expenses.schema import SCHEMA
from gymforge.envs.expenses.tools import STATUS, ExpenseTools
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.reward.standard import StandardReward
from gymforge.tasks import TaskSource
from gymforge.tools import FaultPlan
from gymforge.verify import Verdict
from gymforge.verify.rules import check_rules
from gymforge.world.db import TemplateCache, WorldDB
from gymforge.world.render import RENDERER_VERSION
from gymforge.world.verify import Expect, effect_findings, from_violations, verdict_of
from gymforge.world.writes import WorldFaults

TOKENS_PER_REPORT = 260
"""The token budget per report: about twice what the oracle spends (list rows, a report
read and a decision, with their calls)."""


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


class ExpensesEnv(ExpenseTools):
    spec = EnvSpec(
        "expenses",
        "1.2.0",
        renderer_version=RENDERER_VERSION,
        description="Process a batch of 30-60 expense reports against a written policy.",
    )
    schema = SCHEMA
    templates = TemplateCache(128)
    tasks = TaskSource.of(FAMILIES, SPLIT)
    budget = Budget(max_steps=3 * 60 + 14, max_tokens=4_000 + 60 * TOKENS_PER_REPORT)
    reward = StandardReward(step_cost=-0.001)
    system_prompt = SYSTEM_PROMPT
    qa = QAProfile(
        verifier_kinds=("state",),
        redteam=REDTEAM,
        # the shaped ``report`` component pays each right decision, at most 0.5 a batch, also
        # to an attack that decides every report and then fails the batch (a repeated write)
        baselines=Baselines(oracle_min=0.99, bad_max=0.05, noop_max=0.0, redteam_reward_max=0.5),
        # QA times cold resets (each a fresh 30-60 report batch to generate and load) under
        # ~12-step random episodes; warm resets and long episodes: benchmarks/world_reset.py
        throughput=ThroughputBudget(reset_p50_ms=15.0, steps_per_s=400.0),
        family_weights={f: 1.0 for f in TRAIN_FAMILIES},
    )

    def episode_budget(self, task: Task) -> Budget:
        """Room for the oracle's path (two calls per report, the pages, four more) plus one
        step per report for retries and mistakes; tokens in proportion to the batch."""
        truth = self.truth_of(task)
        n = len(truth.order)
        steps = 2 * n + truth.pages + 4
        return Budget(max_steps=steps + max(16, n), max_tokens=4_000 + n * TOKENS_PER_REPORT)

    def fault_plan(self, task: Task) -> FaultPlan:
        rate = float(task.params["fault_rate"])
        return FaultPlan(
            rates={"timeout": rate, "empty": rate / 2, "stale": rate / 2},
            tools=frozenset({"get_report", "list_reports"}),
        )

    def world_faults(self, task: Task) -> WorldFaults:
        rate = float(task.params["fault_rate"])
        return WorldFaults(
            commit_timeout=rate,
            rate_limited=rate / 2,
            tools=frozenset({"decide_report", "get_report"}),
        )

    def oracle_plan(self, task: Task) -> list[Action]:
        """Policy and rates, every page, then read-and-decide each report in order, submit."""
        t = self.truth_of(task)
        batch = t.batch_id
        plan: list[Action] = [call("get_policy"), call("get_rates")]
        plan += [call("list_reports", batch_id=batch, page=p) for p in range(1, t.pages + 1)]
        for rid in t.order:
            d = t.decisions[rid]
            plan += [
                call("get_report", report_id=rid),
                call(
                    "decide_report",
                    report_id=rid,
                    decision=d["decision"],
                    reason_code=d["reason_code"],
                    approved_usd_cents=d["usd"] if d["decision"] == "approve" else 0,
                    idempotency_key=f"{batch}-{rid}",
                ),
            ]
        plan += [call("submit_batch", batch_id=batch, idempotency_key=f"{batch}-submit")]
        return [
            *plan,
            Reply(text=f"Batch {batch}: all {len(t.order)} reports decided and submitted."),
        ]

    def expected(self, task: Task) -> Expect:
        t = self.truth_of(task)
        decisions = t.decisions
        return Expect(
            added={
                "reimbursements": [
                    {"report_id": rid, "employee_id": t.employees[rid], "usd_cents": d["usd"]}
                    for rid, d in decisions.items()
                    if d["decision"] == "approve"
                ]
            },
            updated={
                "reports": {
                    rid: {
                        "status": STATUS[d["decision"]],
                        "reason_code": d["reason_code"],
                        "approved_usd_cents": d["usd"] if d["decision"] == "approve" else None,
                    }
                    for rid, d in decisions.items()
                },
                "batches": {t.batch_id: {"status": "submitted"}},
            },
            touched=frozenset({"audit_log"}),
        )

    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        t = self.truth_of(task)
        findings = effect_findings(world.diff(), self.expected(task))
        findings += from_violations(check_rules(PROCESS_RULES, self.log))
        right = 0
        for rep in world.all("SELECT * FROM reports WHERE batch_id = ?", t.batch_id):
            d = t.decisions[rep["id"]]
            approved = d["usd"] if d["decision"] == "approve" else None
            want = (STATUS[d["decision"]], d["reason_code"], approved)
            right += (rep["status"], rep["reason_code"], rep["approved_usd_cents"]) == want
        n = len(t.order)
        batch = world.get("batches", t.batch_id) or {}
        facts = {"reports": n, "correct": right, "submitted": batch.get("status") == "submitted"}
        return verdict_of(findings, verifier="expenses.state@1", facts=facts, score=right / n)
