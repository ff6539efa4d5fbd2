"""The fixture Harbor tasks through ``run``, ``eval`` and ``replay`` on the container engine:
the oracle passes the shell, Python-repository and reward.json tasks and fails the task
whose ``test.sh`` crashes; a no-op fails them all; a missing base image is one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harbor_helpers import CONTAINERS, DATASET, IMAGE_MAP, MISSING_BASE, cli_env

pytestmark = CONTAINERS
ENV = f"harbor:{DATASET}"


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(),
        check=False,
    )


def records(out: Path) -> dict[str, dict[str, object]]:
    """Each task's final record, by task name."""
    last: dict[str, dict[str, object]] = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("record") == "step" and rec.get("info", {}).get("verdict"):
            last[str(rec["task_id"]).split("@")[0].removeprefix("harbor.")] = rec
    return last


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor") / "oracle"
    p = cli("run", ENV, "--policy", "oracle", "--image-map", IMAGE_MAP, "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def test_the_oracle_passes_every_task_but_the_one_whose_test_sh_crashes(oracle_run: Path) -> None:
    last = records(oracle_run)
    assert sorted(last) == ["crashing-test", "hello-shell", "multi-reward", "py-repo"]
    verdicts = {name: rec["info"]["verdict"] for name, rec in last.items()}  # type: ignore[index]
    assert {n for n, v in verdicts.items() if v["passed"]} == {
        "hello-shell",
        "multi-reward",
        "py-repo",
    }
    crashed = verdicts["crashing-test"]
    assert crashed["reason"] == "no_reward" and crashed["facts"]["exit_code"] == 127
    assert "a-verifier-helper-that-is-not-installed" in crashed["facts"]["output_tail"]
    assert last["multi-reward"]["reward_components"] == {"harbor.header": 0.5, "harbor.value": 0.5}
    assert last["py-repo"]["reward_components"] == {"harbor.reward": 1.0}
    assert "Ran 1 test in <time>" in verdicts["py-repo"]["facts"]["output_tail"]


def test_the_oracle_run_replays_step_for_step(oracle_run: Path) -> None:
    p = cli(
        "replay", str(oracle_run / "trajectories.jsonl"), "--env", ENV, "--image-map", IMAGE_MAP
    )
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    assert "replay ok: 4 episodes" in p.stdout + p.stderr


def test_eval_of_a_noop_agent_scores_nothing(tmp_path: Path) -> None:
    out = tmp_path / "noop"
    p = cli("eval", ENV, "--policy", "noop", "--image-map", IMAGE_MAP, "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    metrics = json.loads((out / "eval.json").read_text())["metrics"]
    assert metrics["episodes"] == 4 and metrics["success"]["successes"] == 0
    assert metrics["reward"]["mean"] == 0.0 and metrics["verifier_errors"] == 0
    reasons = {r["info"]["verdict"]["reason"] for r in records(out).values()}  # type: ignore[index]
    assert reasons <= {"below_pass", "no_reward"}


def test_a_missing_base_image_is_refused_in_one_line_naming_it_and_the_fix(tmp_path: Path) -> None:
    p = cli("run", f"harbor:{MISSING_BASE}", "--policy", "oracle", "--out", str(tmp_path / "r"))
    assert p.returncode != 0
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert "registry.invalid/gymforge/not-here:1.0" in lines[0]
    assert "--image-map registry.invalid/gymforge/not-here:1.0=LOCAL_IMAGE" in lines[0]
    assert not (tmp_path / "r" / "trajectories.jsonl").exists()


def test_the_image_map_provides_the_missing_base(tmp_path: Path) -> None:
    p = cli(
        "run", f"harbor:{MISSING_BASE}", "--policy", "noop", "-n", "1",
        "--image-map", "registry.invalid/gymforge/not-here:1.0=gymforge-base-python",
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    (rec,) = records(tmp_path / "r").values()
    assert rec["info"]["verdict"]["passed"] is True  # type: ignore[index]  # its test.sh always pays
