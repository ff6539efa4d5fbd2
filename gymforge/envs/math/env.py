"""``math``: single-turn math problems judged by the hack-resistant math verifier.

Six procedural families (arithmetic chains, linear equations and systems, rational
expressions, polynomial roots, modular arithmetic, counting), each with difficulty levels
and a held-out region, plus any user JSONL dataset (``gymforge run math --dataset FILE``) in
one of the shapes of ``shapes``: plain ``{"task_id"?, "question", "answer", "form"?,
"rel_tol"?}``, GSM8K (the gold after ``####``) or MATH (``problem``, ``solution``).

- **The answer** is the last ``\\boxed{}`` outside ``<think>``: an earlier box the response
  corrected is ignored. ``MathEnv(strict=True)`` fails any response whose final answers
  disagree (visible self-corrections and hedges across boxes) instead.
- **Forms.** A task whose prompt demands a form declares it (``MathTruth.form``: ``integer``,
  ``reduced_fraction`` or ``simplest_radical``; ``math.arith`` and ``math.rationals`` from v2,
  ``math.modular`` from v2; a dataset row's ``form``). The verdict then reports ``form_ok``
  and the reward has a ``form`` component (0, or -0.5 when the form is not met); the
  ``task`` component and ``passed`` stay about the value. ``MathEnv(require_form=True)``
  also makes success require the form. A task that asks for a number (``integer``,
  ``reduced_fraction``) needs one written out: a computation of the gold's value (the
  question's expression copied into the box) fails as ``unevaluated`` (from 1.2.0); an
  equation chain ending in the number written out (``3 \\cdot 4 = 12``) and a residue with
  its modulus (``5 \\pmod{7}``) read as that number (from 1.3.0; docs/math.md).
- **Budget.** An episode may use ``max_tokens`` (default 40,960: the prompt and a 32k-token
  chain of thought with room to spare), counted by the environment's token counter. A
  reply over it is not read: its verdict is ``passed: false``, reason ``over_budget``, and
  the episode is truncated (``max_tokens``), never left without a verdict.
- **Answer conventions** (``answer_convention``, see ``conventions``): ``boxed`` by default,
  as the system prompt asks; grading existing outputs may choose ``hashes``, ``answer-is``
  or ``any`` explicitly.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.tokens import TokenCounter
from gymforge.core.types import Action, Reply, Task
from gymforge.envs.math import arith, counting, linear, modular, rationals, roots
from gymforge.envs.math.conventions import CONVENTIONS, Convention, as_boxed_reply
from gymforge.envs.math.shapes import detect
from gymforge.envs.math.truth import MathTruth
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget
from gymforge.reward import ComposedReward, FormReward, StandardReward
from gymforge.tasks import Dataset, Split, TaskSource, load_jsonl
from gymforge.verify import Verdict
from gymforge.verify.math import MathVerifier

MODULES = (arith, linear, rationals, roots, modular, counting)
ASKS_NUMBER = frozenset({arith.FAMILY.name, rationals.FAMILY.name, modular.FAMILY.name})
"""Families whose questions ask for a number, declared as a form only from version 2 on:
their version-1 tasks (ids issued before, which still resolve) need a number written out
too, or the question's own expression copied into the box would be paid (1.2.0)."""
MAX_TOKENS = 40_960


class MathEnv(ToolEnv[MathTruth, dict[str, Any]]):
    """See the module docstring. ``strict``: fail responses whose final answers disagree;
    ``require_form``: success needs the demanded form too; ``max_tokens``: the budget;
    ``answer_convention``: where a reply's answer is read (``conventions``)."""

    spec = EnvSpec(
        "math",
        "1.3.0",
        renderer_version="1",
        description="Single-turn math with exact, hack-resistant answer checking.",
    )
    tasks = TaskSource.of(
        [m.FAMILY for m in MODULES], Split(regions={m.FAMILY.name: m.HELDOUT for m in MODULES})
    )
    budget = Budget(max_steps=3, max_tokens=MAX_TOKENS)
    reward = ComposedReward(StandardReward(), FormReward())
    qa = QAProfile(
        verifier_kinds=("math",), throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=100.0)
    )
    system_prompt = (
        "Solve the problem. Think step by step, then give only the final answer in \\boxed{}."
    )
    verifier = MathVerifier()
    answer_conventions = CONVENTIONS
    random_world = False  # the world is empty: nothing is drawn for it

    def __init__(
        self,
        token_counter: TokenCounter | None = None,
        *,
        strict: bool = False,
        require_form: bool = False,
        max_tokens: int = MAX_TOKENS,
        answer_convention: Convention = "boxed",
    ) -> None:
        super().__init__(token_counter)
        if answer_convention not in CONVENTIONS:
            raise ValueError(f"answer_convention must be one of {', '.join(CONVENTIONS)}")
        self.answer_convention: Convention = answer_convention
        self.strict = strict
        self.require_form = require_form
        if max_tokens != self.budget.max_tokens:
            self.budget = Budget(max_steps=self.budget.max_steps, max_tokens=max_tokens)

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        truth = self.truth_of(task)
        read = as_boxed_reply(reply, self.answer_convention)
        return await self.verifier.averify(read, truth.answer, **self._options(task, truth))

    def over_budget_verdict(self, task: Task, action: Action, tokens: int) -> Verdict:
        budget = self.budget.max_tokens or 0
        truth = self.truth_of(task)
        opts = self._options(task, truth)
        return self.verifier.over_budget(tokens, budget, truth.answer, **opts)

    def succeeded(self, verdict: Verdict | None) -> bool:
        if verdict is None or not verdict.passed:
            return False
        return not self.require_form or verdict.facts.get("form_ok", True) is True

    def _options(self, task: Task, truth: MathTruth) -> dict[str, Any]:
        """The verifier's options for ``task`` of ``truth``: its tolerance and form, if set;
        a task of a family that asks for a number but declared no form yet (``ASKS_NUMBER``)
        needs a number written out all the same."""
        opts: dict[str, Any] = {"strict": self.strict}
        if truth.rel_tol is not None:
            opts["rel_tol"] = truth.rel_tol
        if truth.form is not None:
            opts["form"] = truth.form
        elif task.family in ASKS_NUMBER:
            opts["number"] = True
        return opts

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=f"The answer is \\boxed{{{self.truth_of(task).answer}}}.")]

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """A JSONL file in one of ``shapes.SHAPES`` (decided by its first row), pinned by hash."""
        return load_jsonl(path, name=name, shape=detect)
