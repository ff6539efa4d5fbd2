"""The published mini-swe-agent (examples/mini_swe_agent) as a workspace harness on ``swe``:
it completes an episode against the scripted test server through the proxy, every model turn
is recorded token-exact (each prompt extends the previous turn), and the environment judges
the repository its commands left."""

from __future__ import annotations

from pathlib import Path

from mini_swe_agent_helpers import assert_token_exact, mini_swe_agent_policy
from workspace_helpers import run_workspace, swe_task_ids

from examples.mini_swe_agent.scripted import bash_script, fix_commands
from gymforge.trajectory.io import read_episodes
from tests.evaluate.eval_helpers import run_cli


def test_mini_swe_agent_fixes_an_swe_task(tmp_path: Path) -> None:
    policy = mini_swe_agent_policy()
    [task] = swe_task_ids(1)
    commands = ["ls && head -n 5 README.md", *fix_commands(task), "python -m pytest -q"]
    out = tmp_path / "run"
    result = run_workspace(policy, out, tasks=[task], responder=bash_script(commands))
    assert not result.errors, result.errors
    [log] = read_episodes(out / "trajectories.jsonl")
    actions = [s.action for s in log.steps[1:]]
    assert actions[0].name == "read_issue"  # type: ignore[union-attr]  # the briefing
    ran = [a.arguments["command"] for a in actions[1:-1]]  # type: ignore[union-attr]
    assert len(ran) == len(commands) + 1  # and the submit command, run in the workspace too
    assert all(c.startswith("sh -c ") for c in ran)
    assert actions[-1].kind == "reply"  # type: ignore[union-attr]
    assert log.end is not None and log.end.success, log.end
    # every model turn, token-exact, in the steps it led to
    turns = [t for s in log.steps[1:] if s.policy for t in s.policy.model_turns or []]
    assert len(turns) == len(commands) + 1
    assert_token_exact(turns)
    first = turns[0]["messages"]
    assert "Resolve issue #" in first[-1]["content"]  # mini-swe-agent's prompt holds the task
    replay = run_cli("replay", out / "trajectories.jsonl")
    assert replay.code == 0, replay.stderr
