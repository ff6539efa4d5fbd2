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
