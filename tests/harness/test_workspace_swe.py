"""Workspace mode on ``swe``: a ``harness-cmd:`` harness gets a shell (``gymforge-sh``), its
commands become ``run_command`` steps executed in the environment's sandbox, the trajectory
replays, and the environment judges the final repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workspace_helpers import (
    SYSTEM_PYTHON,
    program_dir,
    run_workspace,
    swe_task_ids,
    write_plan,
)

from examples.mini_swe_agent.scripted import fix_commands
from gymforge.core.errors import UserError
from gymforge.trajectory.io import read_episodes
from tests.evaluate.eval_helpers import run_cli


def final_report(log: object) -> dict[str, object]:
    text = log.steps[-1].action.text  # type: ignore[attr-defined]
    return dict(json.loads(text))


def test_a_shell_harness_fixes_an_swe_task(tmp_path: Path) -> None:
    [task] = swe_task_ids(1)
    commands = ["ls", *fix_commands(task), "exit 3", "echo out; echo err >&2"]
    with program_dir("shell_agent.py") as d:
        plan = write_plan(d, commands)
        policy = f"harness-cmd:{SYSTEM_PYTHON} {d / 'shell_agent.py'} {plan}"
        result = run_workspace(policy, tmp_path / "run", tasks=[task])
    assert not result.errors, result.errors
    [log] = read_episodes(tmp_path / "run" / "trajectories.jsonl")
    report = final_report(log)
    # the instruction is the task's prompt and the issue it names (the briefing step)
    assert "Resolve issue #" in str(report["instruction"])
    assert '"body"' in str(report["instruction"]) or "title" in str(report["instruction"])
    env_names = set(report["env"])  # type: ignore[arg-type]
    assert {"GYMFORGE_SHELL_URL", "GYMFORGE_TOKEN", "GYMFORGE_INSTRUCTION_FILE"} <= env_names
    assert "GYMFORGE_MCP_URL" not in env_names
    ran = report["ran"]
    assert isinstance(ran, list)
    assert [r["exit"] for r in ran[-2:]] == [3, 0]
    assert ran[-1]["out"] == "out\n" and ran[-1]["err"] == "err\n"
    assert "tests" in ran[0]["out"]  # ls of the repository, run in the sandbox
    # every command is one run_command step, after the briefing's read_issue
    actions = [s.action for s in log.steps[1:]]
    assert actions[0].name == "read_issue"  # type: ignore[union-attr]
    shell_steps = actions[1:-1]
    assert [a.name for a in shell_steps] == ["run_command"] * len(commands)  # type: ignore[union-attr]
    assert [a.arguments["command"].split(" ", 2)[:2] for a in shell_steps] == [  # type: ignore[union-attr]
        ["sh", "-c"]
    ] * len(commands)
    assert actions[-1].kind == "reply"  # type: ignore[union-attr]
    # the environment judged the repository the commands left
    assert log.end is not None and log.end.success, log.end
    assert log.end.reward > 0.9
    # the recorded actions replay to the same observations and verdict
    replay = run_cli("replay", tmp_path / "run" / "trajectories.jsonl")
    assert replay.code == 0, replay.stderr
    assert "replay ok: 1 episode," in replay.stderr


def test_workspace_mode_needs_a_shell_tool(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="has no shell tool"):
        run_workspace("harness-cmd:true", tmp_path / "run", env="ledger")
