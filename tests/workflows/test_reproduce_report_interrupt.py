"""Every command that writes a run writes a manifest; reproduce, report and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from wf_helpers import cli, episodes

from gymforge.evaluate.report import load_runs

SKILL = "skilled:1=0.8,2=0.5,3=0.2"


def test_reproduce_of_an_eval_recomputes_and_compares_eval_json(tmp_path: Path) -> None:
    src = tmp_path / "eval"
    res = cli("eval", "ledger", "-p", SKILL, "-n", "3", "-k", "2", "--split", "all", "--out", src)
    assert res.code == 0, res.stderr
    manifest = json.loads((src / "manifest.json").read_text())
    assert manifest["command"] == "eval" and manifest["config"]["k"] == 2
    res = cli("reproduce", src / "manifest.json", "--out", tmp_path / "again")
    assert res.code == 0, res.stderr
    assert "reproduced the eval" in res.stderr and "eval.json matches" in res.stderr
    assert (tmp_path / "again" / "eval.json").exists()
    # a doctored eval.json no longer matches what its trajectories say
    doc = json.loads((src / "eval.json").read_text())
    doc["metrics"]["success"]["rate"] = 1.0
    (src / "eval.json").write_text(json.dumps(doc))
    res = cli("reproduce", src, "--out", tmp_path / "third")
    assert res.code == 1 and "eval.json metrics differs in success" in res.stderr, res.stderr


def test_reproduce_of_a_calibration_and_refusal_of_a_used_out(tmp_path: Path) -> None:
    src = tmp_path / "cal"
    res = cli("calibrate", "ledger", "-p", SKILL, "-n", "3", "-K", "2", "--out", src)
    assert res.code == 0, res.stderr
    res = cli("reproduce", src / "manifest.json", "--out", tmp_path / "again")
    assert res.code == 0, res.stderr
    assert (
        "reproduced the calibrate" in res.stderr and "re-sampling the tasks matches" in res.stderr
    )
    res = cli("reproduce", src / "manifest.json", "--out", tmp_path / "again")
    assert res.code == 2 and "already holds a run" in res.stderr
    res = cli("reproduce", src / "manifest.json", "--out", src)
    assert res.code == 2 and "new directory" in res.stderr


def test_report_accepts_a_plain_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert cli("run", "ledger", "-p", "random", "-n", "4", "--out", run).code == 0
    (r,) = load_runs([run])
    assert r.eval is not None and r.eval["kind"] == "run"
    assert r.metrics["episodes"] == 4 and r.eval["policy"] == "random"
    assert r.eval["failures"]["reasons"], r.eval["failures"]  # random fails; reasons are given
    res = cli("report", run, "--out", tmp_path / "r.html")
    assert res.code == 0, res.stderr
    html = (tmp_path / "r.html").read_text()
    assert "random" in html and "no_change" in html
    assert not (run / "eval.json").exists()  # analysed in memory, the run folder is untouched
    empty = tmp_path / "empty"
    empty.mkdir()
    res = cli("report", empty, "--out", tmp_path / "x.html")
    assert res.code == 2 and "trajectories.jsonl" in res.stderr


def test_ctrl_c_writes_the_summary_and_prints_the_resume_command(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "400"}
    args = ["run", "ledger", "-p", "random", "-n", "100000", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymforge.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C must reach it whatever this process inherited: a background job of a shell
        # without job control (nohup, a CI step's `cmd &`) ignores SIGINT, and so would the run
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        traj = out / "trajectories.jsonl"
        while time.monotonic() < deadline and (
            not traj.exists() or traj.read_bytes().count(b'"record":"episode"') < 5
        ):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    summary = json.loads((out / "summary.json").read_text())
    done = len(episodes(out))
    assert summary["interrupted"] is True and summary["episodes"] == done >= 5
    assert "Traceback" not in stderr
    assert f"interrupted: {done} finished episodes are kept" in stderr
    assert "continue with: gymforge run ledger -p random -n 100000 --out" in stderr
    assert stderr.rstrip().endswith("--resume")
