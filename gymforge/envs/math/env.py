"""``math``: single-turn math problems judged by the hack-resistant math verifier.

Six procedural families (arithmetic chains, linear equations and systems, rational
expressions, polynomial roots, modular arithmetic, counting), each with difficulty levels
and a held-out region, plus any user JSONL dataset (``{"task_id"?, "question", "answer"}``,
``gymforge run math --dataset FILE``). The answer is the last ``\\boxed{}`` outside
``<think>``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task
from gymforge.envs.math import arith, counting, linear, modular, rationals, roots
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa.profile import QAProfile, ThroughputBudget
from gymforge.tasks import Dataset, Split, TaskSource, load_jsonl
from gymforge.verify import Verdict
from gymforge.verify.math import MathVerifier

MODULES = (arith, linear, rationals, roots, modular, counting)


class MathEnv(ToolEnv):
    spec = EnvSpec(
        "math",
        "1.0.0",
        renderer_version="1",
        description="Single-turn math with exact, hack-resistant answer checking.",
    )
    tasks = TaskSource.of(
        [m.FAMILY for m in MODULES], Split(regions={m.FAMILY.name: m.HELDOUT for m in MODULES})
    )
    budget = Budget(max_steps=3, max_tokens=8192)
    qa = QAProfile(
        verifier_kinds=("math",), throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=100.0)
    )
    system_prompt = (
        "Solve the problem. Think step by step, then give only the final answer in \\boxed{}."
    )
    verifier = MathVerifier()

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def verify(self, task: Task, world: Any, reply: str) -> Verdict:
        return self.verifier.verify(reply, task.truth["answer"], **self._options(task))

    async def verify_async(self, task: Task, world: Any, reply: str) -> Verdict:
        return await self.verifier.averify(reply, task.truth["answer"], **self._options(task))

    @staticmethod
    def _options(task: Task) -> dict[str, Any]:
        return {k: task.truth[k] for k in ("rel_tol",) if k in task.truth}

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=f"The answer is \\boxed{{{task.truth['answer']}}}.")]

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """A JSONL file of ``{"task_id"?, "question", "answer"}`` rows, pinned by hash."""
        return load_jsonl(path, name=name)
