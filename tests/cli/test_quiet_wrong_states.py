"""Issue 34, finding 4: quiet wrong states. ``verify-log`` and ``replay`` passed an empty
file ("ok: 0 episodes", exit 0); SIGTERM ended a run with no summary and no message;
``--overwrite`` left the previous run's ``hacks.md``, ``hacks.json`` and exports beside the
new run; ``export --format trl`` of a scripted run exited 1 (the integrity code) with a
cryptic refusal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import SOURCE, cli, one_error_line, policy

from gymforge.cli.common import INFRA_EXIT

KEY = b"quiet-wrong-states-key-0123456789"


@pytest.mark.parametrize("command", ["verify-log", "replay"])
def test_an_empty_log_is_an_error(command: str, tmp_path: Path) -> None:
    empty = tmp_path / "trajectories.jsonl"
    empty.write_text("")
    line = one_error_line(cli(command, empty))
    assert "no episode" in line


@pytest.mark.parametrize("command", ["verify-log", "replay"])
def test_a_log_of_only_a_run_seal_is_an_error(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sealed run none of whose episodes finished holds its run seal and nothing else."""
    key = tmp_path / "key"
    key.write_bytes(KEY)
    monkeypatch.setenv("FLAKY_TAG", str(tmp_path))
    monkeypatch.setenv("FLAKY_FAILURES", "100")
    out = tmp_path / "run"
    args = ["run", "ledger", "-n", "1", "--max-retries", "0", "--seal-key-file", key]
    r = cli(*args, "--policy", policy("flaky"), "--out", out)
    assert r.code == INFRA_EXIT, r.stderr
    assert '"run_seal"' in (out / "trajectories.jsonl").read_text().replace(" ", "")
    line = one_error_line(cli(command, out / "trajectories.jsonl", "--seal-key-file", key))
    assert "only a run seal" in line


def test_overwrite_removes_what_the_previous_run_derived(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-n", "2", "--out", out).code == 0
    assert cli("hacks", out).code == 0
    assert cli("export", out, "--format", "sft").code == 0
    (out / "notes.txt").write_text("mine")  # not the run's: kept
    derived = ["hacks.md", "hacks.json", "export.sft.jsonl"]
    assert all((out / name).exists() for name in derived)
    r = cli("run", "ledger", "-n", "1", "--seed", "3", "--out", out, "--overwrite")
    assert r.code == 0, r.stderr
    assert [name for name in derived if (out / name).exists()] == []
    assert (out / "notes.txt").read_text() == "mine"


def test_export_refusal_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-n", "2", "--out", out).code == 0
    target = tmp_path / "trl" / "rows.jsonl"
    line = one_error_line(cli("export", out, "--format", "trl", "--out", target))
    assert "2 recorded no token ids" in line and "--format sft" in line
    assert not target.exists() and not target.parent.exists()
    assert not (out / "export.trl.jsonl").exists()


def _wait_for_episode(path: Path, proc: subprocess.Popen[str]) -> None:
    for _ in range(600):  # bounded: up to 60 s
        if path.exists() and '"record":"episode"' in path.read_text().replace(" ", ""):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"no episode was recorded: {proc.communicate()[1][-2000:]}")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_is_handled_like_ctrl_c(
    signum: signal.Signals, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    args = ["run", "ledger", "-n", "40", "--policy", policy("slow"), "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymforge.cli", *args],
        cwd=SOURCE,
        env={**os.environ, "PYTHONPATH": str(SOURCE), "NO_COLOR": "1", "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_episode(out / "trajectories.jsonl", proc)
    proc.send_signal(signum)
    try:
        _, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 128 + signum, stderr  # README: 130, 143, 129
    assert f"interrupted by {signum.name}:" in stderr and "with summary.json" in stderr
    assert f"continue with: gymforge {' '.join(args)} --resume" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert 1 <= summary["episodes"] < 40
    assert "Traceback" not in stderr
    monkeypatch.setenv("SLOW_PAUSE_S", "0")  # the pause only kept the first run going
    resumed = cli(*args, "--resume")
    assert resumed.code == 0, resumed.stderr
    assert json.loads((out / "summary.json").read_text())["episodes"] == 40
