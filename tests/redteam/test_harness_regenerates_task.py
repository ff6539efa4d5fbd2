"""A ``harness-cmd:`` program never calls the model: it rebuilds its task from the task id
and seed in its prompt file with gymforge (the installed package, or the checkout found
through the runner's working directory and ``PYTHONPATH``) and answers with the oracle's
reply. Success scores 100% on ``math`` with no policy at all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show


def test_the_harness_cannot_regenerate_its_task(tmp_path: Path) -> None:
    with Accomplice() as acc, attacker_dir() as d:
        policy = attack_command("regen", acc, d / "attacker.py", python=sys.executable)
        result = run_attack(policy, tmp_path, env="math", n=2)
        show(acc.reports)
    assert not result.errors, result.errors
    assert len(acc.reports) == 2
    for report in acc.reports:
        assert "crashed" not in report, report
        assert not report.get("task_id") and not report.get("seed"), "the task id leaked"
        assert report["regen"]["rc"] != 0, report["regen"]  # gymforge is not importable
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["success_rate"] == 0, summary
