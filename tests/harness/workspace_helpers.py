"""Shared pieces of the workspace-harness tests: the ``swe`` tasks they draw, world-readable
copies of this folder's harness programs, and a real run (``prepare`` + ``run_sync``, the
path ``gymforge run`` takes) of a harness in workspace mode. (An ``swe`` task's reference
fix as shell commands is the example's: ``examples.mini_swe_agent.scripted.fix_commands``.)"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gymforge.registry.handle import open_env
from gymforge.rollout.executors import executor_for
from gymforge.rollout.plan import prepare
from gymforge.rollout.runner import RunResult, run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import Responder, scripted_responder

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by any uid, standard library only
SEED = 11


def swe_task_ids(n: int, seed: int = SEED) -> list[str]:
    handle = open_env("swe")
    assert handle.tasks is not None
    return handle.tasks.sample(n, seed, "train")


@contextmanager
def program_dir(*names: str) -> Iterator[Path]:
    """A world-readable directory holding copies of this folder's programs ``names`` (a
    confined harness reads its program as its own, unprivileged user)."""
    d = Path(tempfile.mkdtemp(prefix="gymforge-workspace-harness-"))
    try:
        os.chmod(d, 0o755)
        for name in names:
            shutil.copyfile(HERE / name, d / name)
            os.chmod(d / name, 0o644)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def write_plan(d: Path, commands: Sequence[str], name: str = "plan.json") -> Path:
    path = d / name
    path.write_text(json.dumps(list(commands)))
    os.chmod(path, 0o644)
    return path


def run_workspace(
    policy: str,
    out: Path,
    *,
    env: str = "swe",
    tasks: list[str] | None = None,
    n: int = 1,
    responder: Responder | None = None,
    options: dict[str, Any] | None = None,
    **spec: Any,
) -> RunResult:
    """A real run of ``policy`` in workspace mode, the model a scripted test server."""
    with OpenAITestServer(responder or scripted_responder(["unused"])) as upstream:
        run = RunSpec(
            env=env, policy=policy, n=n, seed=SEED, out=out, max_retries=0, tasks=tasks, **spec
        )
        policy_options = {"base_url": upstream.base_url, "mode": "workspace", **(options or {})}
        ready = prepare(run, policy_options=policy_options)
        try:
            return run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))
        finally:
            if ready.source.close is not None:
                asyncio.run(ready.source.close())
