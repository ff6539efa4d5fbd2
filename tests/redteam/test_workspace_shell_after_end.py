"""A harness keeps an ended episode's shell URL and token (leaked, or its own kept by a
process that outlived its episode) and sends a command through it later. Success would let
commands act on a workspace after its episode was judged, or be recorded into a finished
trajectory."""

from __future__ import annotations

import json
from pathlib import Path

from redteam_workspace import HERE
from workspace_helpers import run_workspace

from gymforge.trajectory.io import read_episodes


def test_an_ended_episode_shell_runs_nothing(tmp_path: Path) -> None:
    policy = f"harness:{HERE / 'workspace_callables.py'}:after_end"
    result = run_workspace(policy, tmp_path / "run", n=3, concurrency=1)
    assert not result.errors, result.errors
    logs = read_episodes(tmp_path / "run" / "trajectories.jsonl")
    reports = [json.loads(log.steps[-1].action.text) for log in logs]  # type: ignore[union-attr]
    assert sorted(len(r["earlier"]) for r in reports) == [0, 1, 2]
    for report in reports:
        for status, body in report["earlier"]:
            assert status == 404, (status, body)
        assert report["own_call"][0] == 200
    for log in logs:  # each episode holds its own one command, nothing later
        commands = [
            s.action.arguments["command"]  # type: ignore[union-attr]
            for s in log.steps[1:]
            if s.action is not None
            and s.action.kind == "tool_call"
            and s.action.name == "run_command"
        ]
        assert commands == ["sh -c 'echo mine'"], commands
