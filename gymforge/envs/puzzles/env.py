"""``puzzles``: single-turn logic puzzles judged by the validity of the proposed solution.

Five families, one module each (generator, difficulty levels, held-out region, validity
checker and oracle): ``puzzles.countdown``, ``puzzles.sudoku``, ``puzzles.knights_knaves``,
``puzzles.shortest_path`` and ``puzzles.coloring``. The agent replies once; the reply must
end with a line ``Answer: <solution>`` (see ``answer.py`` for the extraction rules: reasoning
in ``<think>`` is ignored, hedges and trailing text fail). The family's checker then accepts
*every* valid solution, not a string match against the stored one, and reports a reason in
``Verdict.facts`` otherwise.

Versions: a family that changes its generator or checker bumps its own version and keeps
the old one (``base.py``), so every id ever issued regenerates and is judged as recorded, and
trajectories recorded before replay unchanged (``EnvSpec.version`` stays, since no recorded
episode's dynamics changed; new ids say ``v2``, verdicts name ``family@version``).

Held-out split: the largest or hardest region of every family (seven-number countdowns,
9x9 sudokus with at most 26 givens, eight islanders, shortest paths on 18+ nodes, colourings
of 15+ nodes). Every family keeps trainable levels.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task
from gymforge.envs.puzzles.dataset import load_puzzles
from gymforge.envs.puzzles.families import BY_NAME, FAMILIES, family_of
from gymforge.envs.puzzles.redteam import CASES
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget
from gymforge.tasks import Split, TaskSource
from gymforge.tasks.dataset import Dataset
from gymforge.verify import Verdict
from gymforge.verify.puzzles.answer import extract_answer
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth

__all__ = ["BY_NAME", "FAMILIES", "PuzzleFamily", "PuzzlesEnv"]


class PuzzlesEnv(ToolEnv[PuzzleTruth, dict[str, Any]]):
    """Single-turn puzzles: the first reply is verified; there are no tools."""

    spec = EnvSpec(
        "puzzles",
        "1.0.0",  # families version themselves; every recorded episode replays unchanged
        renderer_version="1",
        description="Countdown, sudoku, knights and knaves, shortest paths, graph colouring.",
    )
    tasks = TaskSource.of(FAMILIES, Split(regions={f.name: dict(f.heldout) for f in FAMILIES}))
    budget = Budget(max_steps=2, max_tokens=16_384)
    qa = QAProfile(
        verifier_kinds=("match",),
        redteam=CASES,
        throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=500.0),
    )
    system_prompt = (
        "You solve puzzles. Reason as long as you need, then give your solution on a final "
        "line that starts with 'Answer:', in exactly the format the puzzle asks for."
    )

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """A JSONL file of puzzle rows (see ``dataset.py``), pinned by hash. A bad row is
        reported in ``Dataset.errors`` (file and line) and the other rows still load."""
        return load_puzzles(path, name)

    def truth_of(self, task: Task) -> PuzzleTruth:
        """The truth model of the family (and version) that judges ``task`` (the current
        episode's frozen truth, parsed so at reset, is handed back as it is)."""
        current = self._truth
        if current is not None and task is self.task and current.model_config.get("frozen"):
            return current
        truth: PuzzleTruth = family_of(task).truth_of(task)
        return truth

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        family = family_of(task)
        answer, problem = extract_answer(reply, family.multiline())
        outcome = problem if answer is None else family.check(family.truth_of(task), answer)
        assert outcome is not None
        return Verdict(
            passed=outcome.passed,
            reason=outcome.reason,
            facts={"reason": outcome.reason, **outcome.facts},
            verifier=f"{family.name}@{family.version}",
        )

    def oracle_plan(self, task: Task) -> list[Action]:
        family = family_of(task)
        truth = family.truth_of(task)
        # a dataset row's own answer, else the family's solution
        answer = truth.reference if truth.reference is not None else family.oracle_answer(truth)
        return [Reply(text=f"Answer: {answer}")]
