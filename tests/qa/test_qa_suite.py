"""The QA suite end to end: built-in environments pass it, the CLI reports it, and the
not-applicable / nothing-to-test rules hold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gymforge.envs import BUILTIN
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import FAMILY
from gymforge.qa import (
    CHECK_NAMES,
    QAOptions,
    QAProfile,
    QAReport,
    QATarget,
    run_check,
    run_qa,
)
from gymforge.tasks import Split, TaskSource
from tests.budget import without_speed_budget

REPO = Path(__file__).resolve().parents[2]
FAST = QAOptions(episodes=12, fuzz_examples=20)
REASON = "remote-only env; measured by the load test"


def gymforge_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


# ---- every built-in environment passes every check ---------------------------------------
@pytest.mark.parametrize(
    "env_id", [pytest.param(e, marks=pytest.mark.xdist_group(f"qa-{e}")) for e in sorted(BUILTIN)]
)
def test_builtin_env_passes_all_ten_checks(
    env_id: str, builtin_qa_report: Callable[[str], QAReport]
) -> None:
    report = builtin_qa_report(env_id)
    failed = [c for c in report.checks if not c.passed]
    assert not failed, f"{env_id}: {len(failed)} checks failed:\n" + "\n".join(
        f"  {c.name}: {c.details}" for c in failed
    )
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert all(c.applicable for c in report.checks), "built-ins never skip a check"
    assert report.passed


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(BUILTIN))
def test_builtin_env_passes_all_ten_checks_with_the_defaults(env_id: str) -> None:
    """``gymforge qa``'s own options (the default run's reports use ``QUICK_QA``)."""
    report = without_speed_budget(run_qa(QATarget.load(env_id)))
    failed = [f"{c.name}: {c.details}" for c in report.checks if not c.passed]
    assert not failed, f"{env_id}: " + "\n".join(failed)
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert all(c.applicable for c in report.checks), "built-ins never skip a check"


@pytest.mark.perf
@pytest.mark.parametrize("env_id", sorted(BUILTIN))
def test_builtin_throughput_budget(env_id: str) -> None:
    """The throughput budgets themselves (wall clock: ``make test-perf`` only; the default
    suite's reports keep the figures without judging them)."""
    report = run_qa(QATarget.load(env_id), only=["throughput"])
    assert report.passed, report.checks[0].details


# ---- the CLI --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qa_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """One full ``gymforge qa ledger --json --report PATH`` run: (completed process, PATH)."""
    report = tmp_path_factory.mktemp("qa") / "nested" / "report.json"
    return gymforge_cli("qa", "ledger", "--json", "--report", str(report)), report


@pytest.mark.xdist_group("qa-cli-ledger")  # one worker: one qa_json run
def test_cli_json_report_shape(qa_json: tuple[Any, Path]) -> None:
    proc, _ = qa_json
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # stdout is nothing but the JSON document
    assert set(data) == {"env", "version", "checks", "passed", "not_applicable"}
    assert data["env"] == "ledger"
    assert data["version"] == LedgerEnv.spec.version
    assert data["passed"] is True
    assert [c["name"] for c in data["checks"]] == list(CHECK_NAMES)
    for check in data["checks"]:
        assert {"name", "passed", "details", "seconds"} <= set(check), check
        assert check["passed"] is True, check
        assert check["applicable"] is True
        assert isinstance(check["details"], str) and check["details"]
        assert isinstance(check["seconds"], int | float) and check["seconds"] >= 0
    assert "replay_determinism" not in proc.stderr  # no human progress rows in --json mode


@pytest.mark.xdist_group("qa-cli-ledger")  # one worker: one qa_json run
def test_cli_report_file_holds_the_same_json(qa_json: tuple[Any, Path]) -> None:
    proc, report = qa_json
    assert report.is_file(), "--report must create missing parent directories"
    assert json.loads(report.read_text()) == json.loads(proc.stdout)


def test_cli_report_without_json_flag(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    proc = gymforge_cli(
        "qa", "ledger", "--check", "distribution_audit", "--check", "heldout_exclusion",
        "--report", str(report),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # human output goes to stderr only
    assert "distribution_audit" in proc.stderr and "all checks passed" in proc.stderr
    data = json.loads(report.read_text())
    assert set(data) == {"env", "version", "checks", "passed", "not_applicable"}
    assert [c["name"] for c in data["checks"]] == ["distribution_audit", "heldout_exclusion"]
    assert data["passed"] is True


def test_cli_failing_env_by_import_path_exits_1() -> None:
    proc = gymforge_cli(
        "qa", "tests.qa.broken_envs:HackableVerifierEnv", "--check", "verifier_redteam",
        "--episodes", "12",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "FAIL" in proc.stderr
    assert "verifier_redteam" in proc.stderr
    assert "1 failed: verifier_redteam" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_failing_env_json_mode_exits_1_with_json() -> None:
    proc = gymforge_cli(
        "qa", "tests.qa.broken_envs:HackableVerifierEnv", "--check", "verifier_redteam",
        "--episodes", "12", "--json",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["passed"] is False
    [check] = data["checks"]
    assert check["name"] == "verifier_redteam" and check["passed"] is False
    assert "judged a success" in check["details"]


def test_cli_unknown_check_is_a_one_line_user_error() -> None:
    proc = gymforge_cli("qa", "ledger", "--check", "bogus")
    assert proc.returncode == 2
    assert "unknown checks ['bogus']" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---- not-applicable declarations -------------------------------------------------------
class RemoteOnlyLedger(LedgerEnv):
    qa = QAProfile(verifier_kinds=("state",), not_applicable={"throughput": REASON})


def test_user_env_may_declare_a_check_not_applicable() -> None:
    target = QATarget.from_factory(RemoteOnlyLedger)
    assert target.builtin is False
    result = run_check("throughput", target, FAST)
    assert result.passed is True
    assert result.applicable is False
    assert REASON in result.details
    report = run_qa(target, FAST, only=["throughput", "heldout_exclusion"])
    assert report.passed
    entry = report.as_json()["checks"][0]
    assert entry["name"] == "throughput"
    assert entry["applicable"] is False and entry["passed"] is True
    assert REASON in entry["details"]
    assert report.as_json()["checks"][1]["applicable"] is True


def test_builtin_env_may_not_declare_a_check_not_applicable() -> None:
    target = QATarget.from_factory(RemoteOnlyLedger, builtin=True)
    result = run_check("throughput", target, FAST)
    assert result.passed is False
    assert "built-in" in result.details and REASON in result.details
    assert not run_qa(target, FAST, only=["throughput"]).passed


def test_not_applicable_must_name_a_real_check() -> None:
    with pytest.raises(ValueError, match="bogus"):
        QAProfile(not_applicable={"bogus": "x"})


@pytest.mark.parametrize("reason", ["", "   "])
def test_not_applicable_needs_a_reason(reason: str) -> None:
    with pytest.raises(ValueError, match="reason"):
        QAProfile(not_applicable={"throughput": reason})


def test_unknown_check_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown check"):
        run_check("bogus", QATarget.load("ledger"), FAST)


# ---- a check with nothing to test fails ------------------------------------------------
class NoAttacksLedger(LedgerEnv):
    qa = QAProfile()  # no verifier kinds, no red-team cases


class NoHeldoutLedger(LedgerEnv):
    tasks = TaskSource.of([FAMILY], Split())


def test_redteam_with_nothing_to_test_fails() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(NoAttacksLedger), FAST)
    assert result.passed is False
    assert result.applicable is True
    assert result.details.startswith("nothing to test")
    assert "verifier_kinds" in result.details


def test_heldout_exclusion_with_no_split_fails() -> None:
    result = run_check("heldout_exclusion", QATarget.from_factory(NoHeldoutLedger), FAST)
    assert result.passed is False
    assert result.details.startswith("nothing to test")
    assert "held-out" in result.details


def test_env_without_oracle_cannot_pass_oracle_checks() -> None:
    class NoOracleLedger(LedgerEnv):
        oracle_action = None  # type: ignore[assignment]

    target = QATarget.from_factory(NoOracleLedger)
    assert target.has_oracle is False
    for name in ("scripted_baselines", "verifier_redteam"):
        result = run_check(name, target, FAST)
        assert result.passed is False
        assert "nothing to test" in result.details and "oracle" in result.details
