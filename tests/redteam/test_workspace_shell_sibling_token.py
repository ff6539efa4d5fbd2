"""Two workspace episodes run at once; each learns the other's shell URL (leaked: a URL is
no secret) and sends a command to it with its own token. Success would let one rollout of a
GRPO group run commands in, and so sabotage, another's workspace (and its reward)."""

from __future__ import annotations

import json
from pathlib import Path

from redteam_workspace import HERE
from workspace_helpers import run_workspace

from gymforge.trajectory.io import read_episodes


def test_a_token_opens_only_its_own_episode_shell(tmp_path: Path) -> None:
    policy = f"harness:{HERE / 'workspace_callables.py'}:sibling"
    result = run_workspace(policy, tmp_path / "run", n=2, concurrency=2)
    assert not result.errors, result.errors
    logs = read_episodes(tmp_path / "run" / "trajectories.jsonl")
    assert len(logs) == 2
    for log in logs:
        report = json.loads(log.steps[-1].action.text)  # type: ignore[union-attr]
        assert report["sibling"], "the two episodes never overlapped"
        assert report["sibling_call"][0] == 403, report["sibling_call"]
        assert report["no_token"][0] == 401, report["no_token"]
        status, body = report["own_call"]
        assert status == 200 and json.loads(body)["stdout"] == "mine\n", report["own_call"]
        # the one command in each workspace is the episode's own
        commands = [
            s.action.arguments["command"]  # type: ignore[union-attr]
            for s in log.steps[1:]
            if s.action is not None
            and s.action.kind == "tool_call"
            and s.action.name == "run_command"
        ]
        assert commands == ["sh -c 'echo mine'"], commands
