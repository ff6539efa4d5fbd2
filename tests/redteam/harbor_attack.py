"""Shared by the Harbor attacks of this corpus (a plain module): a task directory whose
``test.sh`` writes its reward only on success (``set -e``, the common pattern), a player
that runs actions through a real ``harbor:`` environment on the container engine, and the
naive judge the attacks are aimed at (``test.sh`` run in the agent's own container, reward
read there), so each test shows the attack would win against that judge and loses against
gymforge's."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.env import StepResult
from gymforge.core.types import Action, Reply
from gymforge.envs.harbor.env import HarborEnv
from gymforge.registry.resolve import make_env
from gymforge.testing.containers import engine_ready

READY, WHY = engine_ready()
CONTAINERS = [pytest.mark.containers, pytest.mark.skipif(not READY, reason=WHY)]

CHECK = """import sys
sys.path.insert(0, "/app")
from calc.ops import mean
assert mean([1, 2, 3]) == 2 and mean([4]) == 4
print("ok")
"""
FILES = {
    "instruction.md": "Fix calc.ops.mean: it divides by len(xs) - 1.\n",
    "task.toml": '[metadata]\ncategory = "python"\n\n[verifier]\ntimeout_sec = 60.0\n',
    "environment/Dockerfile": "FROM gymforge-base-python\nWORKDIR /app\nCOPY repo/ /app/\n",
    "environment/repo/calc/__init__.py": "",
    "environment/repo/calc/ops.py": "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n",
    # writes its reward only when every step succeeded (set -e): a common test.sh
    "tests/test.sh": "#!/bin/bash\nset -e\nmkdir -p /logs/verifier\ncd /app\n"
    "python3 /tests/check.py\necho 1 > /logs/verifier/reward.txt\n",
    "tests/check.py": CHECK,
    "solution/solve.sh": "#!/bin/bash\nprintf 'def mean(xs):\\n    return sum(xs) / len(xs)\\n'"
    " > /app/calc/ops.py\n",
}


def task_dir(root: Path, files: dict[str, str] | None = None) -> Path:
    task = root / "fix-mean"
    for rel, text in (files or FILES).items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    return task


async def _naive_reward(env: HarborEnv) -> str:
    """The reward a judge that runs test.sh in the agent's container would read."""
    from gymforge.envs.harbor.container import engine_run

    box = await env._box()
    await engine_run("cp", f"{env.world.task.root / 'tests'}/.", f"{box.name}:/tests", timeout=60)
    await box.exec("bash /tests/test.sh", 60, 65536)
    await asyncio.sleep(1.0)  # let anything the agent left running have its turn
    r = await box.exec("cat /logs/verifier/reward.txt", 30, 4096)
    return r.stdout.decode().strip()


def play(
    actions: list[Action],
    naive: bool = True,
    files: dict[str, str] | None = None,
    steps: list[StepResult] | None = None,
) -> tuple[StepResult, str | None]:
    """Play ``actions`` (the final one a reply) on a fresh task (``files``, default
    ``FILES``); returns the last step and, with ``naive``, what the naive judge would have
    read just before the reply. ``steps`` (if given) gets every step's result."""

    async def go() -> tuple[StepResult, str | None]:
        with tempfile.TemporaryDirectory() as tmp:
            env = make_env(f"harbor:{task_dir(Path(tmp), files)}")
            assert isinstance(env, HarborEnv)
            try:
                (tid,) = env.harbor_tasks
                await env.reset(tid, 0)
                seen: str | None = None
                result: Any = None
                for a in actions:
                    if isinstance(a, Reply) and naive:
                        seen = await _naive_reward(env)
                    result = await env.step(a)
                    if steps is not None:
                        steps.append(result)
                    assert not result.truncated
                return result, seen
            finally:
                await env.close()

    return asyncio.run(go())
