"""A ``harness-cmd:`` program sets the proxy's weight version (``PUT /weight_version``) with
its own token, then asks the model. Success would record its turns (and every later
episode's) under a checkpoint of its choosing: training data attributed to the wrong
weights, an off-policy batch passed off as on-policy."""

from __future__ import annotations

from pathlib import Path

from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show

from gymforge.trajectory.io import read_episodes


def test_the_harness_cannot_set_the_weight_version(tmp_path: Path) -> None:
    with Accomplice() as acc, attacker_dir() as d:
        result = run_attack(attack_command("weight", acc, d / "attacker.py"), tmp_path)
        show(acc.reports)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert "crashed" not in report, report
    status, _ = report["put_weight_version"]
    assert status in (401, 403), report["put_weight_version"]
    assert report["chat"][0] == 200, report["chat"]  # its own model call works
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    turns = [t for s in log.steps[1:] for t in (s.policy.model_turns or [])]  # type: ignore[union-attr]
    assert turns and all(t["weight_version"] != "forged" for t in turns)
