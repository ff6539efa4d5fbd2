"""Attack: make the judge raise on the tasks the policy cannot solve, so that its failures
become verifier errors and drop out of success.

A planted environment (``planted_judge_crash``) judges a one-word reply, and its verifier
raises on a marker in the reply: the stand-in for any judge an agent's data can break (a
file name the swe judge chokes on, an answer a scorer cannot parse). The policy answers half
the tasks right and sends the marker on the rest. Were verifier errors left out of the
denominator, ``gymforge eval``/``run``/``calibrate`` would report 100% success, pass@k and
pass^k 1.0 and a clean report, with exit 0 and ``hacks`` silent: a policy trained on it
would learn to crash the judge instead of solving. The defence: a verifier error after the
agent acted is a failed, counted episode (``trajectory.outcome``), its rate is shown beside
success everywhere, and ``hacks`` flags a rate above the scripted baselines'.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ENV = "planted_judge_crash:CrashEnv"
SABOTEUR = "planted_judge_crash:half_saboteur"
HONEST = "planted_judge_crash:half_honest"
PATHS = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}


@pytest.fixture
def cli(gymforge_cli: Any) -> Any:
    def run(*args: str) -> Any:
        proc = gymforge_cli(*args, env=PATHS)
        print(" ".join(args), "->", proc.returncode, proc.stderr[-2000:])
        return proc

    return run


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_eval_counts_the_crashed_judge_as_a_failure(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    proc = cli("eval", ENV, "-p", SABOTEUR, "-n", "4", "-k", "2", "--out", str(out))
    assert proc.returncode == 0
    m = read(out / "eval.json")["metrics"]
    assert m["episodes"] == 8 and m["tasks"] == 4
    assert m["success"]["rate"] == 0.5, m["success"]
    assert m["pass@k"]["2"] == 0.5 and m["pass^k"]["2"] == 0.5
    assert m["verifier_errors"] == 4
    assert m["verifier_error"]["rate"] == 0.5 and m["verifier_error"]["n"] == 8
    assert "verifier error" in proc.stderr  # the console table shows it beside success
    summary = read(out / "summary.json")
    assert summary["success_rate"] == 0.5 and summary["verifier_error_rate"] == 0.5
    reasons = {json.loads(line)["reason"] for line in (out / "failures.jsonl").open()}
    assert reasons == {"verifier_error: ValueError"}
    page = (tmp_path / "report.html").as_posix()
    assert cli("report", str(out), "--out", page).returncode == 0
    html = Path(page).read_text()
    assert "verifier errors" in html and "50.0%" in html


def test_run_scores_the_trick_like_the_honest_policy(cli: Any, tmp_path: Path) -> None:
    rates, tables = {}, {}
    for policy in (SABOTEUR, HONEST):
        out = tmp_path / policy.split(":")[1]
        proc = cli("run", ENV, "-p", policy, "-n", "4", "--out", str(out))
        assert proc.returncode == 0
        rates[policy], tables[policy] = read(out / "summary.json"), proc.stderr
    assert rates[SABOTEUR]["success_rate"] == rates[HONEST]["success_rate"] == 0.5
    assert rates[SABOTEUR]["episodes"] == 4
    assert rates[SABOTEUR]["verifier_error_rate"] == 0.5
    assert rates[HONEST]["verifier_error_rate"] == 0.0
    assert "verifier" in tables[SABOTEUR]  # the run table has the column


def test_calibrate_counts_the_crashed_rollouts(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "calibrate"
    proc = cli("calibrate", ENV, "-p", SABOTEUR, "-n", "4", "-K", "2", "--out", str(out))
    assert proc.returncode == 0
    data = read(out / "calibration.json")
    assert data["episodes"] == 8 and data["verifier_errors"] == 4
    failed = [r for r in data["rows"] if r["task_id"].startswith("crash.fail/")]
    assert len(failed) == 2
    for row in failed:
        assert (row["n"], row["successes"], row["verifier_errors"]) == (2, 0, 2)
        assert row["pass_rate"] == 0.0 and row["hi"] < 1.0
        assert "2 of 2 rollouts ended in a verifier error" in row["detail"]


def test_hacks_names_the_policy_that_crashes_the_judge(cli: Any, tmp_path: Path) -> None:
    runs = {}
    for policy in ("oracle", "noop", SABOTEUR):
        runs[policy] = tmp_path / policy.split(":")[-1]
        assert cli("run", ENV, "-p", policy, "-n", "8", "--out", str(runs[policy])).returncode == 0
    base = ["--baseline", str(runs["oracle"]), "--baseline", str(runs["noop"])]
    proc = cli("hacks", str(runs[SABOTEUR]), *base, "--json", "--fail-on-suspicious")
    assert proc.returncode == 1
    found = [f for f in json.loads(proc.stdout)["findings"] if f["kind"] == "verifier_errors"]
    assert len(found) == 1 and SABOTEUR in found[0]["detail"], found
    assert "50% (4/8)" in found[0]["detail"] and "oracle 0% (0/8)" in found[0]["detail"]
    # the scripted baselines themselves are not flagged against each other
    clean = cli("hacks", str(runs["oracle"]), *base, "--json", "--fail-on-suspicious")
    assert clean.returncode == 0, clean.stdout
    # hacks can also play the baselines itself, on the run's own tasks and seeds
    played = cli("hacks", str(runs[SABOTEUR]), "--play-baselines", "--json")
    assert played.returncode == 0
    found = [f for f in json.loads(played.stdout)["findings"] if f["kind"] == "verifier_errors"]
    assert len(found) == 1 and "random 0% (0/8)" in found[0]["detail"], found
