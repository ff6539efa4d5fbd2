"""Issue 34, finding 1: mistakes were reported as infrastructure failures. The oracle on
dataset rows without a reference solution, and ``recorded:R`` where R holds none of the
tasks, were retried three times and ended in exit 3 advising ``--resume``, which can never
succeed; the oracle's message, "code has no oracle", was also wrong for the generated code
tasks, which have one. Now each is one ``error:`` line naming the fix, exit 2, one attempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import cli, one_error_line

from gymforge.sandbox.doctor import bwrap_works

needs_sandbox = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")

ROW = {
    "task_id": "add",
    "prompt": 'def add(a, b):\n    """Return a + b."""\n',
    "entry_point": "add",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
}


@needs_sandbox
def test_oracle_on_rows_without_a_reference_is_a_mistake(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(ROW) + "\n")
    r = cli("run", "code", "--dataset", rows, "--policy", "oracle", "--out", tmp_path / "r")
    line = one_error_line(r)
    assert "task add has no reference solution" in line and "canonical_solution" in line
    assert "attempt" not in r.stderr and "--resume" not in r.stderr


@needs_sandbox
def test_oracle_on_generated_code_tasks_plays(tmp_path: Path) -> None:
    """The generated tasks carry their reference: the oracle solves them."""
    out = tmp_path / "r"
    r = cli("run", "code", "-n", "1", "--policy", "oracle", "--out", out)
    assert r.code == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["success_rate"] == 1.0


def test_recorded_run_without_the_tasks_is_a_mistake(tmp_path: Path) -> None:
    first = tmp_path / "first"
    assert cli("run", "ledger", "-n", "2", "--out", first).code == 0
    recorded = f"recorded:{first / 'trajectories.jsonl'}"
    out = tmp_path / "other"
    r = cli("run", "ledger", "-n", "2", "--seed", "9", "--policy", recorded, "--out", out)
    line = one_error_line(r)
    assert "holds no episode for task" in line and "it holds 2 episodes" in line
    assert "infrastructure" not in r.stderr and "--resume" not in r.stderr
    # the same tasks, seed and rollouts play back
    again = cli("run", "ledger", "-n", "2", "--policy", recorded, "--out", tmp_path / "same")
    assert again.code == 0, again.stderr
