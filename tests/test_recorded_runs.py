"""Recorded runs of every built-in environment still replay, and their tasks still resolve to
the same bytes (see ``tests/data/recorded/README.md``): the guarantee that refactors of truth,
worlds and task families change nothing a trainer or a replay can see."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
from pathlib import Path

import pytest

from gymforge.core.seeding import canonical_json
from gymforge.envs import BUILTIN
from gymforge.registry.resolve import make_env
from gymforge.rollout.replay import replay_file
from gymforge.sandbox.doctor import bwrap_works

DATA = Path(__file__).parent / "data" / "recorded"
TASKS: dict[str, dict[str, str]] = json.loads((DATA / "tasks.json").read_text())
RUNS = sorted(p.name for p in DATA.glob("*.jsonl.gz"))
SANDBOXED = {"code", "code-agent"}


def _env_id(name: str) -> str:
    return name.rsplit("-", 1)[0].replace("reasoning-gym_", "reasoning-gym:")


def _skip_unless_runnable(env_id: str) -> None:
    if env_id.startswith("reasoning-gym:"):
        pytest.importorskip("reasoning_gym")
    if env_id in SANDBOXED and not bwrap_works()[0]:
        pytest.skip("bubblewrap unavailable")


def test_every_builtin_environment_is_recorded() -> None:
    recorded = {_env_id(n) for n in RUNS}
    assert set(BUILTIN) <= recorded
    assert set(BUILTIN) <= set(TASKS)
    assert all(len(TASKS[e]) >= 6 for e in TASKS)


@pytest.mark.parametrize("name", RUNS)
def test_recorded_run_replays_identically(name: str, tmp_path: Path) -> None:
    env_id = _env_id(name)
    _skip_unless_runnable(env_id)
    path = tmp_path / name.removesuffix(".gz")
    path.write_bytes(gzip.decompress((DATA / name).read_bytes()))
    report = asyncio.run(replay_file(path, lambda _: make_env(env_id)))
    assert report.divergence is None, report.divergence.describe()
    assert report.episodes == 2 and report.steps >= 4


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_recorded_tasks_resolve_to_the_same_bytes(env_id: str) -> None:
    if env_id.startswith("reasoning-gym:"):
        pytest.importorskip("reasoning_gym")
    env = make_env(env_id)
    data = DATA / "datasets" / f"{env_id}.jsonl"
    if data.exists():
        env.use_dataset(env.load_dataset(data))
    got = {}
    for task_id in TASKS[env_id]:
        task = env.tasks.resolve(task_id)
        got[task_id] = hashlib.sha256(
            canonical_json(task.model_dump(mode="json")).encode()
        ).hexdigest()
    assert got == TASKS[env_id]
