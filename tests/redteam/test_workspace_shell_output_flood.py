"""A workspace harness runs one command that writes 40 MB. Success would be the flood
reaching the harness's answer, the step's record or the runner's memory uncapped (a run's
trajectory file grows by the flood, or the runner holds it)."""

from __future__ import annotations

from pathlib import Path

from redteam_workspace import the_episode, workspace_attacker
from workspace_helpers import run_workspace


def test_a_flood_is_capped(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with workspace_attacker("flood") as policy:
        result = run_workspace(policy, out)
    assert not result.errors, result.errors
    _, report = the_episode(out)
    [ran] = report["ran"]
    assert 0 < ran["out_bytes"] <= 8_000, ran["out_bytes"]  # swe shows 4000 chars a stream
    assert "limits" in ran["err"], ran["err"]  # the harness is told the command was stopped
    assert ran["exit"] == 124  # stopped by its limits
    assert (out / "trajectories.jsonl").stat().st_size < 200_000
