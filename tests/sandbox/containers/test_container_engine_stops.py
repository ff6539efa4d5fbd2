"""An engine that stops in the middle of ``gymforge run code --sandbox docker``: the episodes
it breaks are infrastructure errors (exit 3, nothing of them written or scored), and
``--resume`` with the engine back completes exactly those, into the run a clean one gives."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from containers_helpers import CONTAINERS

from gymforge.sandbox.docker_engine import IMAGE_PYTHON, engine

pytestmark = CONTAINERS

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
N = 6


def run(out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["run", "code", "-n", str(N), "--out", str(out), "--sandbox", "docker", *extra]
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
        check=False,
    )


def episodes(out: Path) -> dict[str, list[tuple[int, float]]]:
    """Each written episode's ``(step, reward)`` records, by ``task_id#rollout``."""
    found: dict[str, list[tuple[int, float]]] = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            found.setdefault(f"{r['task_id']}#{r['rollout']}", []).append(
                (r.get("step", -1), r.get("reward", 0.0))
            )
    return found


def test_an_engine_stopping_mid_run_is_infrastructure_resumable_and_never_scored(
    tmp_path: Path,
) -> None:
    real = engine().cli
    flag = tmp_path / "engine-stopped"
    wrapper = tmp_path / "engine"
    wrapper.write_text(
        f'#!/bin/sh\nif [ -e {flag} ]; then echo "engine stopped" >&2; exit 125; fi\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = dict(
        os.environ,
        PYTHONPATH=f"{ROOT}{os.pathsep}{HERE}",
        GYMFORGE_DOCKER=str(wrapper),
        GYMFORGE_SANDBOX_IMAGE=IMAGE_PYTHON,
        GYMFORGE_SANDBOX_WORKERS="1",
        GF_ENGINE_FLAG=str(flag),
        GF_REAL_ENGINE=real,
        GF_STOP_AT="0",
    )
    policy = ("--policy", "engine_stopper:factory")
    clean = run(tmp_path / "clean", env, *policy)
    assert clean.returncode == 0, clean.stderr

    out = tmp_path / "broken"
    proc = run(out, dict(env, GF_STOP_AT="3"), *policy, "--max-retries", "1")
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    want = episodes(tmp_path / "clean")
    assert len(want) == N
    written = episodes(out)
    assert 0 < len(written) < N, sorted(written)  # the episodes before the stop, no other
    assert all(written[k] == want[k] for k in written), "a broken episode was written"
    assert "--resume" in proc.stderr

    os.unlink(flag)
    resumed = run(out, env, *policy, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert episodes(out) == want
