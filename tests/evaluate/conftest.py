"""Shared runs for the evaluation tests: one ``gymforge eval`` with a held-out split, one
``gymforge calibrate``, each made once per session through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_helpers import EVAL_ARGS, SKILL, run_cli


@pytest.fixture(scope="session")
def eval_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "skilled"
    res = run_cli(
        *EVAL_ARGS,
        out,
    )
    assert res.code == 0, res.stderr
    return out


@pytest.fixture(scope="session")
def calibration_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("calibrate") / "cal"
    res = run_cli(
        "calibrate", "ledger", "--policy", SKILL, "--samples", "6", "-n", "10", "--out", out
    )
    assert res.code == 0, res.stderr
    return out
