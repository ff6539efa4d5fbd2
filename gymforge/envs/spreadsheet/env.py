"""``spreadsheet``: a workbook world (sheets of typed cells, formulas evaluated by a real
formula engine, defined names, pivot tables) with five task families.

The world is the SQLite world of ``gymforge.world``: cells are rows keyed ``Sheet!A1``, so
reset restores a template (seed formula values precomputed by the family), snapshots and
diffs come from the world layer, and collateral edits are the changed cell rows outside
the task's allowed ranges. Reward: the sparse ``task`` component (the verdict passed) and
a small ``step_cost``.
"""

from __future__ import annotations

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.spreadsheet.families import FAMILIES, SPLIT, TRAIN_FAMILIES
from gymforge.envs.spreadsheet.judge import judge
from gymforge.envs.spreadsheet.policy import READ_TOOLS, SYSTEM_PROMPT, WRITE_TOOLS
from gymforge.envs.spreadsheet.redteam import REDTEAM
from gymforge.envs.spreadsheet.schema import SCHEMA
from gymforge.envs.spreadsheet.tools import SheetTools
from gymforge.envs.spreadsheet.truth import SheetTruth
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.reward.standard import StandardReward
from gymforge.tasks import TaskSource
from gymforge.tools import FaultPlan
from gymforge.verify import Verdict
from gymforge.world.db import TemplateCache, WorldDB
from gymforge.world.render import RENDERER_VERSION
from gymforge.world.writes import WorldFaults


def solution(truth: SheetTruth) -> list[Action]:
    """The reference solution as actions: each write gets its own idempotency key."""
    plan: list[Action] = []
    for i, s in enumerate(truth.solution):
        args = dict(s.arguments)
        if s.name in WRITE_TOOLS:
            args["idempotency_key"] = f"w{i}-{s.name}"
        plan.append(ToolCall(name=s.name, arguments=args, call_id=f"call_{i}"))
    return [*plan, Reply(text="Done: the workbook holds the requested result.")]


class SpreadsheetEnv(SheetTools):
    spec = EnvSpec(
        "spreadsheet",
        "1.1.0",
        renderer_version=RENDERER_VERSION,
        description="Clean, compute, pivot, reconcile and fix workbooks with real formulas.",
    )
    schema = SCHEMA
    templates = TemplateCache(256)
    tasks = TaskSource.of(FAMILIES, SPLIT)
    budget = Budget(max_steps=40, max_tokens=40_000)
    reward = StandardReward(step_cost=-0.002)
    system_prompt = SYSTEM_PROMPT
    qa = QAProfile(
        verifier_kinds=("state",),
        redteam=REDTEAM,
        baselines=Baselines(oracle_min=0.95, bad_max=0.05, noop_max=0.0),
        throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=150.0),
        family_weights={f: 1.0 for f in TRAIN_FAMILIES},
    )

    def episode_budget(self, task: Task) -> Budget:
        """The oracle's steps twice over plus ten; tokens for every seed cell read a few
        times over."""
        t = self.truth_of(task)
        cells = len(t.world["cells"]) + len(t.targets)
        return Budget(max_steps=2 * len(t.solution) + 10, max_tokens=6_000 + 40 * cells)

    def fault_plan(self, task: Task) -> FaultPlan:
        rate = float(task.params["fault_rate"])
        return FaultPlan(
            rates={"timeout": rate, "stale": rate / 2, "permission_denied": rate / 4},
            tools=READ_TOOLS | WRITE_TOOLS,
        )

    def world_faults(self, task: Task) -> WorldFaults:
        rate = float(task.params["fault_rate"])
        return WorldFaults(commit_timeout=rate, rate_limited=rate / 4, tools=WRITE_TOOLS)

    def oracle_plan(self, task: Task) -> list[Action]:
        return solution(self.truth_of(task))

    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        return judge(self.book, self.truth_of(task), self.log)
