"""Shared set-up for the ``code-agent`` attacks of this corpus (imported as a plain module): a
small MBPP-style dataset (``add-0``, ``add-1``...: ``add(a, b)`` with a reference solution),
and a player that runs a list of actions through a real ``CodeAgentEnv`` on the corpus's code
judge and returns the steps and the state snapshot after each of them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from gymforge.core.env import StepResult
from gymforge.core.seeding import fingerprint
from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.code.agent import CodeAgentEnv
from gymforge.verify.code import CodeJudge

REFERENCE = "def add(a, b):\n    return a + b\n"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"
RIGHT = f"```python\n{REFERENCE}```"
TASK = "code.lists/v1/d2/s3"


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, arguments=args)


def add_dataset(root: Path, rows: int = 1) -> Path:
    """``rows`` tasks ``add-0``... (MBPP rows with a reference, so the oracle works)."""
    lines = []
    for i in range(rows):
        row = {
            "task_id": f"add-{i}",
            "text": "Write a function add(a, b) that returns the sum of a and b.",
            "code": REFERENCE,
            "test_list": ["assert add(1, 2) == 3", f"assert add({i}, 40) == {i + 40}"],
        }
        lines.append(json.dumps(row))
    path = root / "add.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def agent_env(judge: CodeJudge, dataset: Path | None = None) -> CodeAgentEnv:
    env = CodeAgentEnv(judge=judge)
    if dataset is not None:
        env.use_dataset(env.load_dataset(dataset))
    return env


def play(env: CodeAgentEnv, tid: str, actions: list[Action]) -> list[StepResult]:
    """Reset ``tid`` and play ``actions`` (a wrong final reply is added if none ends the
    episode), taking the state fingerprint after every step as the episode loop does (a
    state that cannot be fingerprinted fails here as it fails a run)."""

    async def go() -> list[StepResult]:
        await env.reset(tid, 0)
        fingerprint(await env.snapshot())
        steps = []
        for a in [*actions, Reply(text=WRONG)]:
            steps.append(await env.step(a))
            fingerprint(await env.snapshot())
            if steps[-1].done:
                return steps
        return steps

    return asyncio.run(go())


def tool_result(step: StepResult) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(step.observation.messages[-1].content)
    return out


def ran(step: StepResult) -> dict[str, Any]:
    """The ``run_code`` report of a step (failing the test if the tool failed)."""
    out = tool_result(step)
    assert out["ok"], out
    result: dict[str, Any] = out["result"]
    return result
