"""Optional W&B logging, offline: the same metrics end up in the local run files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import SKILL, run_cli

from gymforge.evaluate.wandb_log import flatten_scalars


def test_flatten_scalars() -> None:
    flat = flatten_scalars(
        {
            "success": {"rate": 0.5, "n": 4},
            "pass@k": {"1": 0.5},
            "rows": [1],
            "x": None,
            "steps": {"histogram": {"all": {"3": 2}}, "mean": 3.0},
            "ok": True,
        }
    )
    assert flat == {
        "success/rate": 0.5,
        "success/n": 4.0,
        "pass@k/1": 0.5,
        "steps/mean": 3.0,
        "ok": 1.0,
    }


def test_eval_logs_to_wandb_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wandb", reason="wandb is an optional extra: pip install 'gymforge[wandb]'")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    out = tmp_path / "run"
    res = run_cli(
        "eval",
        "ledger",
        "--policy",
        SKILL,
        "--split",
        "all",
        "-n",
        "3",
        "-k",
        "2",
        "--out",
        out,
        "--wandb",
        "--wandb-project",
        "gymforge-test",
    )
    assert res.code == 0, res.stderr
    assert "logged to W&B" in res.stderr and res.stdout == ""
    (run_file,) = (out / "wandb").glob("offline-run-*/run-*.wandb")
    blob = run_file.read_bytes()
    data = json.loads((out / "eval.json").read_text())
    for key in (
        "success/rate",
        "pass@k/2",
        "pass^k/2",
        "heldout_gap/gap",
        "tools/tool_error_rate",
        "reward/components/task",
    ):
        assert key.encode() in blob, key
    assert data["metrics"]["success"]["rate"] is not None
    tables = list((out / "wandb").glob("offline-run-*/files/media/table/by_family*.table.json"))
    assert tables and "ledger.transfer" in tables[0].read_text()
