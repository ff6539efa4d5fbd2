"""``eval`` and ``calibrate`` exit 3, after writing and printing what finished, when
infrastructure failures left episodes unwritten (as ``run`` does); ``--resume`` then runs only
the missing ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import run_cli

from gymforge.cli.common import INFRA_EXIT

POLICY = f"{Path(__file__).with_name('flaky_infra.py')}:make"


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_unwritten_episodes_exit_3_and_say_resume(tmp_path: Path, command: str) -> None:
    out = tmp_path / command
    args = [command, "ledger", "--policy", POLICY, "-n", "6", "--out", out]
    if command == "calibrate":
        args += ["--samples", "2", "--variants", "0"]
    r = run_cli(*args)
    assert r.code == INFRA_EXIT, r.stderr
    assert " not written: infrastructure" in r.stderr and "--resume" in r.stderr
    assert "Traceback" not in r.stderr
    result = out / ("eval.json" if command == "eval" else "calibration.json")
    assert result.exists()  # what finished is written before the exit
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    episodes = [json.loads(x) for x in lines if '"record":"episode"' in x.replace(" ", "")]
    assert episodes and all(e["success"] for e in episodes)  # never scored as failures
