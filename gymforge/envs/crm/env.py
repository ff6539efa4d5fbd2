"""``crm``: sales-operations requests over a SQLite CRM, under written rules.

A colleague (the seeded requester) asks for a change in plain language: update a contact,
log an activity, move a deal along the pipeline, add a contact that may already exist,
merge a duplicate account, change a record another team owns, close a deal. Some requests
are ambiguous (two records fit, or a value is missing); ``ask_requester`` answers from the
requester's hidden intent (``gymforge.envs.crm.requester``: scripted, or any ``Policy``
given as ``user_policy``). The verifier judges the final database (expected rows changed,
nothing else), the policy facts of the final state and the process rules over the action
log (each charged at the step where it broke, ``process``); asking is shaped (``clarify``:
+0.1 for the question that settles an ambiguous request, -0.1 per needless one) and a
needless question or acting before clarifying fails the task.
"""

from __future__ import annotations

import random
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.policy import episode_context
from gymforge.core.types import Action, Message, Reply, State, Task, ToolCall
from gymforge.envs.crm.families import FAMILIES, SPLIT, TRAIN_FAMILIES
from gymforge.envs.crm.policy import (
    PROCESS_RULES,
    READ_TOOLS,
    SYSTEM_PROMPT,
    WRITE_TOOLS,
    change_findings,
    policy_checks,
)
from gymforge.envs.crm.redteam import REDTEAM
from gymforge.envs.crm.requester import PolicyRequester, ScriptedRequester
from gymforge.envs.crm.schema import SCHEMA
from gymforge.envs.crm.seed import TEAMS
from gymforge.envs.crm.writes import CrmTools
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.reward.process import RuleCredit
from gymforge.tasks import TaskSource
from gymforge.tools import FaultPlan
from gymforge.verify import Verdict
from gymforge.verify.rules import check_rules
from gymforge.world.db import TemplateCache, WorldDB
from gymforge.world.render import RENDERER_VERSION
from gymforge.world.verify import Expect, effect_findings, from_violations, verdict_of
from gymforge.world.writes import WorldFaults

INCIDENTAL = {t: frozenset({"updated_at"}) for t in ("accounts", "contacts", "opportunities")}
"""What the tools change beside the requested columns: an update's time stamp. Any other
column of an updated record that the request did not ask for is collateral."""
UNGIVEN = {"contacts": {"phone": None}}
"""Columns of a created record that no request gives a value for: left empty, never made up
(compared with each expected new row, unless the row names its own value)."""


class CrmEnv(CrmTools):
    spec = EnvSpec(
        "crm",
        "1.0.0",
        renderer_version=RENDERER_VERSION,
        description="CRM requests: contacts, activities, pipeline stages, duplicates, ownership.",
    )
    schema = SCHEMA
    templates = TemplateCache(256)
    tasks = TaskSource.of(FAMILIES, SPLIT)
    budget = Budget(max_steps=30, max_tokens=16_000)
    system_prompt = SYSTEM_PROMPT
    qa = QAProfile(
        verifier_kinds=("state",),
        redteam=REDTEAM,
        # the first question that resolves an ambiguity is paid +0.1 (``clarify``) whatever
        # follows: the red team's attacks that follow the oracle's path ask it too
        baselines=Baselines(oracle_min=0.95, bad_max=0.05, noop_max=0.0, redteam_reward_max=0.1),
        # QA times cold resets (each a fresh task to generate and load); warm resets are
        # well under 1 ms (benchmarks/crm.py)
        throughput=ThroughputBudget(reset_p50_ms=10.0, steps_per_s=800.0),
        family_weights={f: 1.0 for f in TRAIN_FAMILIES},
    )

    def process_credit(self) -> RuleCredit:
        """Each broken process rule costs 0.05 at the step where it breaks (``process``)."""
        return RuleCredit(PROCESS_RULES, penalty=-0.05)

    def init_world(self, task: Task, r: random.Random) -> WorldDB:
        self.questions = []
        t = self.truth_of(task)
        self.requester = (
            ScriptedRequester(t)
            if self.user_policy is None
            else PolicyRequester(self.user_policy(), t)
        )
        return super().init_world(task, r)

    async def on_reset(self, task: Task) -> None:
        await super().on_reset(task)
        await self.requester.start(episode_context(self.requester, self, task.task_id, self.seed))

    def state(self) -> State:
        out = super().state()
        out["requester"] = {"questions": [dict(q) for q in self.questions]}
        return out

    def render_reset(self, task: Task) -> list[Message]:
        t = self.truth_of(task)
        team = f"You act for the {TEAMS[t.team_id]} team ({t.team_id})."
        return [
            Message(role="system", content=SYSTEM_PROMPT),
            Message(role="user", content=f"{team}\nRequest from a colleague: {task.prompt}"),
        ]

    def fault_plan(self, task: Task) -> FaultPlan:
        rate = float(task.params["fault_rate"])
        return FaultPlan(
            rates={"timeout": rate / 2, "stale": rate / 2}, tools=READ_TOOLS | WRITE_TOOLS
        )

    def world_faults(self, task: Task) -> WorldFaults:
        """Commit timeouts on writes; rate limits and expired sessions (a retryable
        ``permission_denied``) on reads and writes."""
        rate = float(task.params["fault_rate"])
        return WorldFaults(
            commit_timeout=rate,
            rate_limited=rate / 3,
            permission_denied=rate / 3,
            tools=READ_TOOLS | WRITE_TOOLS,
        )

    # ---- the oracle -----------------------------------------------------------------------
    def oracle_plan(self, task: Task) -> list[Action]:
        """The planned calls (reads, a clarifying question when the request is ambiguous,
        keyed writes), then a one-line summary."""
        t = self.truth_of(task)
        plan: list[Action] = [ToolCall(name=c.tool, arguments=dict(c.args)) for c in t.plan]
        return [*plan, Reply(text=t.summary)]

    # ---- the verifier ---------------------------------------------------------------------
    def expected(self, task: Task) -> Expect:
        t = self.truth_of(task)
        return Expect(
            added={
                table: [{**UNGIVEN.get(table, {}), **row} for row in rows]
                for table, rows in t.added.items()
            },
            updated=t.updated,
            touched=frozenset({"audit_log"}),
            incidental=INCIDENTAL,
        )

    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        t = self.truth_of(task)
        diff = world.diff()
        findings = effect_findings(diff, self.expected(task))
        findings += policy_checks(world, diff, t.team_id)
        findings += from_violations(check_rules(PROCESS_RULES, self.log))
        if t.mentions:
            findings += change_findings(world, diff, t.mentions)
        asked = self.questions
        facts: dict[str, Any] = {
            "changed": diff.as_json(),
            "ambiguous": t.ambiguous,
            "questions": len(asked),
            "clarified": any(q["revealed"] for q in asked),
        }
        return verdict_of(findings, verifier="crm.state@1", facts=facts)
