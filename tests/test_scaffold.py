"""`gymforge new NAME` writes a one-file environment that passes QA unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gymforge.core.errors import UserError
from gymforge.qa import QATarget, run_qa
from gymforge.scaffold import class_name, scaffold

REPO = Path(__file__).resolve().parents[1]


def test_scaffolded_env_passes_every_check(tmp_path: Path) -> None:
    env_file, test_file = scaffold("stockroom", tmp_path)
    assert env_file.name == "stockroom.py" and test_file.name == "test_stockroom.py"
    assert len(env_file.read_text().splitlines()) <= 110  # "one file of about 100 lines"
    target = QATarget.load(f"{env_file}:{class_name('stockroom')}")
    assert target.spec.id == "stockroom"
    report = run_qa(target)
    failed = {c.name: c.details for c in report.checks if not c.passed}
    assert not failed, failed
    assert all(c.applicable for c in report.checks)


def test_scaffolded_test_file_runs_under_pytest(tmp_path: Path) -> None:
    scaffold("bins", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bins.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "10 passed" in proc.stdout


def test_cli_new_and_qa_by_file_path(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "gymforge.cli"]
    made = subprocess.run(
        [*cli, "new", "shelf", "--dir", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    assert "gymforge qa" in made.stderr
    again = subprocess.run(
        [*cli, "new", "shelf", "--dir", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr
    assert "Traceback" not in again.stderr
    qa = subprocess.run(
        [
            *cli,
            "qa",
            f"{tmp_path / 'shelf.py'}:ShelfEnv",
            "--check",
            "verifier_redteam",
            "--check",
            "heldout_exclusion",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert qa.returncode == 0, qa.stderr
    assert '"passed": true' in qa.stdout


@pytest.mark.parametrize("bad", ["Bad", "1x", "has-dash", "", "x" * 41])
def test_bad_names_are_refused(bad: str, tmp_path: Path) -> None:
    with pytest.raises(UserError):
        scaffold(bad, tmp_path)
