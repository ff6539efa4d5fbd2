"""Shared by the attacks on exported Harbor tasks (a plain module): a ``code`` task exported
with ``gymforge tasks export``'s own code, played through a real ``harbor:`` environment on
the container engine with the agent's ``solution.py`` (and any tool calls before it)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.env import StepResult
from gymforge.core.types import Action, Reply, ToolCall
from gymforge.integrations.harbor_export import export_tasks
from gymforge.registry.resolve import make_env
from gymforge.testing.containers import engine_ready

READY, WHY = engine_ready()
CONTAINERS = [pytest.mark.containers, pytest.mark.skipif(not READY, reason=WHY)]
IMAGE_MAP = "python:3.11-slim=gymforge-base-python"


def code_task(env_id: str = "code") -> Any:
    """One procedural ``code`` task (a function task with a reference)."""
    env = make_env(env_id)
    (tid,) = env.tasks.sample(1, 3, "train")  # type: ignore[attr-defined]
    return env.tasks.resolve(tid)  # type: ignore[attr-defined]


def play_exported(
    solution: str, before: list[Action] | None = None, env_id: str = "code"
) -> tuple[StepResult, dict[str, Any], list[str]]:
    """Export one task of ``env_id``, then play ``before``, write ``solution`` to
    ``/app/solution.py`` and reply; (the last step, the task's truth, what each step of
    ``before`` showed the agent)."""
    shown: list[str] = []
    task = code_task(env_id)
    solution = solution.replace("ENTRY", str(task.truth["entry_point"]))

    async def go(root: Path) -> StepResult:
        export_tasks(env_id, [task], root)
        env = make_env(f"harbor:{root}")
        try:
            (tid,) = env.harbor_tasks  # type: ignore[attr-defined]
            await env.reset(tid, 0)
            write = ToolCall(
                name="write_file", arguments={"path": "solution.py", "content": solution}
            )
            result: StepResult | None = None
            for a in [*(before or []), write, Reply(text="Done.")]:
                result = await env.step(a)
                assert not result.truncated
                shown.append("".join(str(m.content) for m in result.observation.messages))
            assert result is not None and result.terminated
            return result
        finally:
            await env.close()

    old = os.environ.get("GYMFORGE_HARBOR_IMAGE_MAP")
    os.environ["GYMFORGE_HARBOR_IMAGE_MAP"] = IMAGE_MAP
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return asyncio.run(go(Path(tmp) / "export")), dict(task.truth), shown
    finally:
        if old is None:
            del os.environ["GYMFORGE_HARBOR_IMAGE_MAP"]
        else:
            os.environ["GYMFORGE_HARBOR_IMAGE_MAP"] = old


def play_task_file(task_file: Path, actions: list[Action]) -> StepResult:
    """Export ``task_file``'s one task (``swe`` command mode), play ``actions`` then reply."""

    async def go(root: Path) -> StepResult:
        from gymforge.envs.swe import SweEnv

        swe = SweEnv()
        (task,) = swe.load_dataset(task_file).tasks
        await swe.close()
        export_tasks("swe", [task], root)
        env = make_env(f"harbor:{root}")
        try:
            (tid,) = env.harbor_tasks  # type: ignore[attr-defined]
            await env.reset(tid, 0)
            result: StepResult | None = None
            for a in [*actions, Reply(text="Done.")]:
                result = await env.step(a)
            assert result is not None and result.terminated
            return result
        finally:
            await env.close()

    old = os.environ.get("GYMFORGE_HARBOR_IMAGE_MAP")
    os.environ["GYMFORGE_HARBOR_IMAGE_MAP"] = IMAGE_MAP
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return asyncio.run(go(Path(tmp) / "export"))
    finally:
        if old is None:
            del os.environ["GYMFORGE_HARBOR_IMAGE_MAP"]
        else:
            os.environ["GYMFORGE_HARBOR_IMAGE_MAP"] = old
