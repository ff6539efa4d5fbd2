"""A ``harness-cmd:`` program writes into the run's output directory (its path is on the
command line the user typed): a forged file and a line appended to ``trajectories.jsonl``.
Success would let it edit the records its reward is read from (and, holding the seal key,
re-seal them: 0/4 became 4/4 and ``verify-log`` said ok)."""

from __future__ import annotations

from pathlib import Path

import pytest
from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show

from gymforge.trajectory.io import read_episodes


@pytest.mark.parametrize("granted", [False, True], ids=["run-not-granted", "parent-granted"])
def test_the_harness_cannot_write_the_run(granted: bool, tmp_path: Path) -> None:
    """With the run's parent directory granted (``--harness-path``), the run directory
    itself is still hidden: an empty read-only directory."""
    tmp_path.chmod(0o755)
    out = tmp_path / "run"
    out.mkdir()
    out.chmod(0o777)  # even a world-writable run directory is out of its reach
    options = {"paths": (str(tmp_path),)} if granted else {}
    with Accomplice() as acc, attacker_dir() as d:
        policy = attack_command("rundir", acc, d / "attacker.py", str(out))
        result = run_attack(policy, out, options=options)
        show(acc.reports)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert "crashed" not in report, report
    assert all(v != "written" for v in report["writes"].values()), report["writes"]
    assert not (out / "forged.txt").exists()
    if granted:
        assert report["listing"] == [], report["listing"]  # the run's files are not there
    for log in read_episodes(out / "trajectories.jsonl"):  # parses: nothing appended
        assert log.steps
