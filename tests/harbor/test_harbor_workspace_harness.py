"""Workspace harnesses on a Harbor task (``hello-shell``), on the container engine: each
shell command is one ``run`` step executed in the task's container, the task's ``test.sh``
judges the container, and the run replays. The published mini-swe-agent
(examples/mini_swe_agent) does it through the proxy with every model turn token-exact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harbor_helpers import CONTAINERS, DATASET, IMAGE_MAP, cli_env

from examples.mini_swe_agent.scripted import bash_script
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import Responder, scripted_responder
from gymforge.trajectory.io import EpisodeLog, read_episodes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
from mini_swe_agent_helpers import assert_token_exact, mini_swe_agent_policy
from workspace_helpers import SYSTEM_PYTHON, program_dir, write_plan

pytestmark = CONTAINERS
TASK = DATASET / "hello-shell"
FIX = ["cat notes.txt", "echo 'hello, harbor' > greeting.txt", "cat greeting.txt"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=cli_env(),
        check=False,
    )


def run_harness(policy: str, out: Path, responder: Responder) -> EpisodeLog:
    with OpenAITestServer(responder) as model:
        p = cli(
            "run",
            f"harbor:{TASK}",
            "--policy",
            policy,
            "--harness-mode",
            "workspace",
            "--base-url",
            model.base_url,
            "--image-map",
            IMAGE_MAP,
            "--max-retries",
            "0",
            "--out",
            str(out),
        )
    assert p.returncode == 0, p.stderr[-3000:]
    [log] = read_episodes(out / "trajectories.jsonl")
    assert log.end is not None and log.end.success, log.end
    trajectories = str(out / "trajectories.jsonl")
    replay = cli("replay", trajectories, "--env", f"harbor:{TASK}", "--image-map", IMAGE_MAP)
    assert replay.returncode == 0, replay.stderr[-2000:]
    return log


def test_a_shell_harness_solves_a_harbor_task(tmp_path: Path) -> None:
    with program_dir("shell_agent.py") as d:
        plan = write_plan(d, FIX)
        policy = f"harness-cmd:{SYSTEM_PYTHON} {d / 'shell_agent.py'} {plan}"
        log = run_harness(policy, tmp_path / "run", scripted_responder(["unused"]))
    report = json.loads(log.steps[-1].action.text)  # type: ignore[union-attr]
    assert "greeting.txt" in report["instruction"]
    assert [r["out"] for r in report["ran"]] == ["draft\n", "", "hello, harbor\n"]
    steps = [s.action for s in log.steps[1:-1]]
    assert [(a.name, a.arguments) for a in steps] == [  # type: ignore[union-attr]
        ("run", {"command": c}) for c in FIX
    ]


def test_mini_swe_agent_solves_a_harbor_task(tmp_path: Path) -> None:
    log = run_harness(mini_swe_agent_policy(), tmp_path / "run", bash_script(FIX))
    commands = [s.action.arguments["command"] for s in log.steps[1:-1]]  # type: ignore[union-attr]
    assert commands[: len(FIX)] == FIX
    turns = [t for s in log.steps[1:] if s.policy for t in s.policy.model_turns or []]
    assert len(turns) == len(FIX) + 1  # and the turn that submits
    assert_token_exact(turns)
