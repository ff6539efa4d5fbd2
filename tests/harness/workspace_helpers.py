"""Shared pieces of the workspace-harness tests: an ``swe`` task's reference fix as shell
commands (what a harness that solved the task would type), and a real run (``prepare`` +
``run_sync``, the path ``gymforge run`` takes) of a harness in workspace mode."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gymforge.envs.swe.env import SweEnv
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

EDIT = (
    "import json, sys; p, old, new = json.loads(sys.argv[1]); s = open(p).read(); "
    "assert s.count(old) == 1, 'old text not found once'; open(p, 'w').write(s.replace(old, new))"
)


def swe_task_ids(n: int, seed: int = SEED) -> list[str]:
    handle = open_env("swe")
    assert handle.tasks is not None
    return handle.tasks.sample(n, seed, "train")


def fix_commands(task_id: str) -> list[str]:
    """The task's reference fix as shell commands (``python3 -c`` edits, ``cat >`` files)."""
    env = SweEnv()
    truth = env.truth_of(env.tasks.resolve(task_id))
    out = []
    for step in truth.fix:
        if step.op == "edit":
            payload = json.dumps([step.path, step.old, step.new])
            out.append(f"python3 -c {shlex.quote(EDIT)} {shlex.quote(payload)}")
        elif step.op == "create":
            out.append(f"printf %s {shlex.quote(step.new)} > {shlex.quote(step.path)}")
        else:
            out.append(f"rm -- {shlex.quote(step.path)}")
    return out


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
