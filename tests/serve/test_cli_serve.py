"""The command line end to end: ``gymforge serve`` in one process; ``gymforge run``,
``replay`` and ``qa`` against it from others."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import REPO, TOKEN, ServeProcess


def cli(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("GYMFORGE_TOKEN", None)
    if token is not None:
        env["GYMFORGE_TOKEN"] = token
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    proc = ServeProcess("ledger", "--token", TOKEN, "--max-sessions", "8", "--qa-hooks")
    try:
        yield proc
    finally:
        proc.stop()


@pytest.mark.xdist_group("serve-cli-ledger")  # one worker: one module server
def test_run_and_replay_against_a_served_env(server: ServeProcess, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ("--policy", "oracle", "-n", "5", "--out", str(out), "--json", "-c", "2")
    done = cli("run", server.url, *args, "--token", TOKEN)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["episodes"] == 5 and summary["success_rate"] == 1.0
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert {r["env_id"] for r in records} == {"ledger"}
    assert TOKEN not in (out / "summary.json").read_text()
    remote = cli("replay", str(out / "trajectories.jsonl"), "--env", server.url, token=TOKEN)
    assert remote.returncode == 0, remote.stderr
    assert "replay ok: 5 episodes" in remote.stderr
    local = cli("replay", str(out / "trajectories.jsonl"))  # the same log replays locally
    assert local.returncode == 0, local.stderr


@pytest.mark.xdist_group("serve-cli-ledger")  # one worker: one module server
def test_cli_refuses_without_the_right_token(server: ServeProcess, tmp_path: Path) -> None:
    wrong = cli("qa", server.url, "--check", "throughput", "--token", "definitely-wrong")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("error:") and "Traceback" not in wrong.stderr
    assert "403 wrong bearer token" in wrong.stderr
    missing = cli("run", server.url, "-n", "1", "--out", str(tmp_path / "x"))
    assert missing.returncode == 2 and "401 missing bearer token" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.xdist_group("serve-cli-ledger")  # one worker: one module server
def test_qa_command_against_a_served_env(server: ServeProcess) -> None:
    done = cli(
        "qa", server.url, "--token", TOKEN, "--json", "-e", "8",
        "--check", "heldout_exclusion", "--check", "verifier_redteam",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["env"] == "ledger" and report["passed"]


def test_unreachable_server_is_one_line() -> None:
    done = cli("run", "ws://127.0.0.1:9", "-n", "1", "--out", "/tmp/never")
    assert done.returncode == 2
    assert "cannot reach the environment server ws://127.0.0.1:9" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_run_against_a_redacting_server_replays_locally(tmp_path: Path) -> None:
    """Without ``--qa-hooks`` the server withholds answer-revealing facts (``gold``), so the
    record holds a redacted ``info``; a local replay redacts its own ``info`` alike."""
    proc = ServeProcess("math", "--token", TOKEN, "--max-sessions", "4")
    try:
        out = tmp_path / "run"
        args = ("--policy", "random", "-n", "3", "--out", str(out), "--token", TOKEN)
        done = cli("run", proc.url, *args)
        assert done.returncode == 0, done.stderr
    finally:
        proc.stop()
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    last_steps = [r for r in records if r["record"] == "step" and r["terminated"]]
    assert last_steps and all("verdict.facts.gold" in r["info"]["withheld"] for r in last_steps)
    local = cli("replay", str(out / "trajectories.jsonl"))
    assert local.returncode == 0, local.stderr
    assert "replay ok: 3 episodes" in local.stderr
