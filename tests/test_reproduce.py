"""Manifests and `gymforge reproduce`: identical re-runs, detected drift, pinned datasets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gymforge.rollout.executors import executor_for
from gymforge.rollout.manifest import read_manifest
from gymforge.rollout.plan import prepare
from gymforge.rollout.reproduce import reproduce
from gymforge.rollout.runner import RunResult, run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.sandbox.doctor import bwrap_works

ENV_FILE = """
from gymforge.envs.ledger import LedgerEnv
from gymforge.core import EnvSpec

class DriftingLedger(LedgerEnv):
    spec = EnvSpec("drifting-ledger", "1.0.0")
    {body}
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args], capture_output=True, text=True, timeout=300
    )


def execute(spec: RunSpec, out: Path) -> RunResult:
    """What ``gymforge run`` does with ``spec``: plan it into ``out``, then run it."""
    ready = prepare(spec.model_copy(update={"out": out}))
    return run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))


def test_manifest_records_what_reproduction_needs(tmp_path: Path) -> None:
    spec = RunSpec(env="ledger", policy="random", n=4, seed=3, group=2)
    execute(spec, tmp_path)
    m = read_manifest(tmp_path / "manifest.json")
    assert RunSpec.model_validate(m["run"]) == spec
    assert len(m["tasks"]) == 4 and m["env"] == {
        "id": "ledger",
        "version": "1.0.0",
        "renderer_version": "1",
    }
    assert m["gymforge"]["version"] and m["python"]["version"].startswith("3.")
    assert "pydantic" in m["dependencies"]
    assert m["sandbox"] == {"kind": "local"}
    report = reproduce(tmp_path / "manifest.json", tmp_path / "again")
    assert report.ok and report.compared == report.identical == 8
    assert report.sampling_matches is True and report.policy == "random"


def test_model_policies_are_reproduced_from_recorded_actions(tmp_path: Path) -> None:
    execute(RunSpec(env="ledger", policy="oracle", n=3), tmp_path / "src")
    src = tmp_path / "src" / "trajectories.jsonl"
    execute(RunSpec(env="ledger", policy=f"recorded:{src}", n=3), tmp_path / "model")
    report = reproduce(tmp_path / "model" / "manifest.json", tmp_path / "again")
    assert report.ok and report.identical == 3
    assert report.policy.startswith("recorded:")


def test_environment_drift_is_detected(tmp_path: Path) -> None:
    env_file = tmp_path / "drift.py"
    env_file.write_text(ENV_FILE.format(body="pass"))
    ref = f"{env_file}:DriftingLedger"
    run = cli("run", ref, "--policy", "oracle", "-n", "4", "--out", str(tmp_path / "a"))
    assert run.returncode == 0, run.stderr
    manifest = str(tmp_path / "a" / "manifest.json")
    same = cli("reproduce", manifest, "--out", str(tmp_path / "b"), "--env", ref)  # a file env
    assert same.returncode == 0, same.stderr
    # the environment changes behind the run's back: its prompt now reads differently
    env_file.write_text(ENV_FILE.format(body='system_prompt = "You are a careful clerk."'))
    drift = cli("reproduce", manifest, "--out", str(tmp_path / "c"), "--json", "--env", ref)
    assert drift.returncode == 1, drift.stderr
    report = json.loads(drift.stdout)
    assert report["differences"] and "differs in" in report["differences"][0]


def test_changed_dataset_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text('{"question": "1+1?", "answer": "2"}\n')
    spec = RunSpec(env="ledger", policy="oracle", n=2)
    execute(spec, tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    manifest["run"]["dataset"] = str(data)
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(manifest))
    bad = cli("reproduce", str(tmp_path / "run" / "manifest.json"), "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "does not take datasets" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_reproduce_uses_the_sandbox_the_run_recorded(tmp_path: Path) -> None:
    """A run judged in containers is reproduced in containers unless --sandbox says
    otherwise: here the recorded docker backend has no engine, so reproduce refuses in one
    line before any episode, and --sandbox local reproduces it."""
    if not bwrap_works()[0]:
        pytest.skip("bubblewrap unavailable")
    run = tmp_path / "run"
    assert cli("run", "code", "--policy", "oracle", "-n", "2", "--out", str(run)).returncode == 0
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["sandbox"] = {"kind": "docker", "image": "gymforge-base-full", "image_id": None}
    (run / "manifest.json").write_text(json.dumps(manifest))
    env = dict(os.environ, GYMFORGE_DOCKER=str(tmp_path / "no-such-engine"))
    env.pop("GYMFORGE_SANDBOX", None)
    args = [sys.executable, "-m", "gymforge.cli", "reproduce", str(run)]
    refused = subprocess.run(
        [*args, "--out", str(tmp_path / "a")], capture_output=True, text=True, env=env, timeout=300
    )
    assert refused.returncode == 2 and "make containers" in refused.stderr, refused.stderr
    assert not (tmp_path / "a" / "trajectories.jsonl").exists()
    local = subprocess.run(
        [*args, "--out", str(tmp_path / "b"), "--sandbox", "local"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert local.returncode == 0, local.stderr
