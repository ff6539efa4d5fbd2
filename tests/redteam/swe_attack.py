"""Shared set-up for the ``swe`` attacks of this corpus (imported as a plain module): a user
task file (``calc``: ``mean`` divides by ``len - 1``; hidden tests in ``hidden/`` run by
``python -m unittest discover -s hidden``), and a player that runs a list of actions through
a real ``SweEnv`` on the corpus's code judge and returns the steps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from gymforge.core.env import StepResult
from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.swe import SweEnv
from gymforge.verify.code import CodeJudge

BUGGY = "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n"
FIXED = "def mean(xs):\n    return sum(xs) / len(xs)\n"
VISIBLE = (
    "import unittest\nfrom calc.ops import mean\n\n\nclass T(unittest.TestCase):\n"
    "    def test_runs(self):\n        self.assertIsInstance(mean([1.0, 2.0]), float)\n"
)
HIDDEN = (
    "import unittest\nfrom calc.ops import mean\n\n\nclass H(unittest.TestCase):\n"
    "    def test_mean(self):\n        self.assertEqual(mean([1, 2, 3]), 2)\n"
    "        self.assertEqual(mean([4]), 4)\n"
)
EXIT_ZERO = "import os\nos._exit(0)\n"


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, arguments=args)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for p, t in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(t)


def calc_task_file(
    root: Path, rows: int = 1, extra: dict[str, str] | None = None, hidden: str = HIDDEN
) -> Path:
    """``rows`` tasks ``calc-0``... over one buggy repository (plus ``extra`` files in both
    the repository and its fixed version); returns the JSONL's path."""
    repo = {"calc/__init__.py": "", "calc/ops.py": BUGGY, "tests/test_ops.py": VISIBLE}
    repo.update(extra or {})
    write_tree(root / "repos/calc", repo)
    write_tree(root / "repos/calc-fixed", {**repo, "calc/ops.py": FIXED})
    write_tree(root / "hidden/calc", {"hidden/test_hidden.py": hidden})
    lines = []
    for i in range(rows):
        row = {
            "task_id": f"calc-{i}",
            "repo": "repos/calc",
            "title": "mean() is wrong",
            "issue": "mean([1, 2, 3]) returns 3.0 but the mean is 2.",
            "visible_command": "python -m unittest discover -s tests",
            "hidden_command": "python -m unittest discover -s hidden",
            "hidden_tests": "hidden/calc",
            "solution": "repos/calc-fixed",
        }
        lines.append(json.dumps(row))
    path = root / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def swe_env(judge: CodeJudge, task_file: Path | None = None) -> SweEnv:
    env = SweEnv(judge=judge)
    if task_file is not None:
        env.use_dataset(env.load_dataset(task_file))
    return env


def oracle(env: SweEnv, tid: str) -> list[Action]:
    return list(env.oracle_plan(env.tasks.resolve(tid)) or [])


def play(env: SweEnv, tid: str, actions: list[Action]) -> list[StepResult]:
    """Reset ``tid`` and play ``actions`` (a final reply is added if none ends the episode)."""

    async def go() -> list[StepResult]:
        await env.reset(tid, 0)
        steps = []
        for a in actions:
            steps.append(await env.step(a))
            if steps[-1].done:
                return steps
        steps.append(await env.step(Reply(text="done")))
        return steps

    return asyncio.run(go())


def tool_result(step: StepResult) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(step.observation.messages[-1].content)
    return out


def verdict(steps: list[StepResult]) -> dict[str, Any]:
    v: dict[str, Any] = steps[-1].info["verdict"]
    return v
