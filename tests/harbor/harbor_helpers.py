"""Shared by the Harbor tests (a plain module on ``sys.path``): the fixture task directories,
a writer of task directories, the image map the fixtures need, and the container marker."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gymforge.testing.containers import engine_ready

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATASET = FIXTURES / "dataset"
MISSING_BASE = FIXTURES / "missing-base"
IMAGE_MAP = "python:3.11-slim=gymforge-base-python"


def write_task(root: Path, files: dict[str, str]) -> Path:
    """A task directory of ``files`` (relative path -> text) under ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def copy_fixture(name: str, dest: Path) -> Path:
    """A copy of fixture task ``name`` at ``dest/name`` (to edit without touching it)."""
    target = dest / name
    shutil.copytree(DATASET / name, target)
    return target


def minimal_task(root: Path, overrides: dict[str, str] | None = None) -> Path:
    """The smallest valid task, with ``overrides`` replacing or adding files."""
    files = {
        "instruction.md": "Do it.\n",
        "task.toml": '[metadata]\ncategory = "shell"\n',
        "environment/Dockerfile": "FROM gymforge-base-python\nWORKDIR /app\n",
        "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
    }
    files.update(overrides or {})
    return write_task(root, files)


READY, WHY = engine_ready()
CONTAINERS = [pytest.mark.containers, pytest.mark.skipif(not READY, reason=WHY)]


def cli_env() -> dict[str, str]:
    """The environment a ``gymforge`` subprocess of these tests runs with."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def judge_in_sandbox(task: Path, workspace: dict[str, str | bytes]) -> dict[str, bytes]:
    """An exported task's ``tests/judge.py`` run directly, without an engine: in one job of
    gymforge's sandbox (the candidate never runs on this host), with the task's ``tests/``
    and ``workspace`` as the job's files and ``/app`` pointed at the latter. Returns the
    files it left in its reward directory; skips where the sandbox cannot run."""
    import json

    from gymforge.sandbox import Limits, SandboxJob
    from gymforge.sandbox.backend import IsolationUnavailableError
    from gymforge.sandbox.preflight import require_sandbox
    from gymforge.verify.code.shared import shared_backend
    from gymforge.verify.services import current

    try:
        require_sandbox({"python"}, current().settings)
    except IsolationUnavailableError as e:
        pytest.skip(str(e))
    tests = task / "tests"
    files: dict[str, str | bytes] = {
        f"tests/{p.relative_to(tests).as_posix()}": p.read_bytes()
        for p in tests.rglob("*")
        if p.is_file()
    }
    spec = json.loads(files["tests/spec.json"])
    spec["workspace"] = "ws"
    files["tests/spec.json"] = json.dumps(spec)
    files |= {f"ws/{rel}": data for rel, data in workspace.items()}
    job = SandboxJob(
        source=(tests / "judge.py").read_text(),
        files=files,
        argv=["--spec", "tests/spec.json", "--logs", "logs", "--as-self"],
        keep_files=True,
        limits=Limits(
            wall_time=120, cpu_time=120, processes=64, memory_bytes=2 << 30, workspace_bytes=8 << 20
        ),
    )
    r = shared_backend().run(job)
    assert r.status == "ok" and r.exit_code == 0, (r.status, r.stdout[-2000:], r.stderr[-2000:])
    return {k.removeprefix("logs/"): v for k, v in (r.files or {}).items() if k.startswith("logs/")}
