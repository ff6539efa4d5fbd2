"""How a report tells a check that ran from one the framework gave nothing to run on."""

from __future__ import annotations

import dataclasses

from gymforge.envs.ledger import LedgerEnv
from gymforge.qa.checks.common import CheckResult, QAOptions
from gymforge.qa.suite import QAReport, run_check
from gymforge.qa.target import QATarget
from gymforge.qa_profile import NOT_SUPPLIED, not_supplied

WHY = not_supplied("SomeFramework 1.0", "the server has no held-out split")


class NoHeldOut(LedgerEnv):
    """A user environment (not a built-in) declaring what its framework lacks."""

    qa = dataclasses.replace(LedgerEnv.qa, not_applicable={"heldout_exclusion": WHY})


def test_not_supplied_check_runs_nothing_and_says_why() -> None:
    assert WHY.startswith(f"{NOT_SUPPLIED} (SomeFramework 1.0): ")
    target = QATarget.from_factory(NoHeldOut, builtin=False)
    result = run_check("heldout_exclusion", target, QAOptions())
    assert result.as_json() == {
        "name": "heldout_exclusion",
        "status": "not_applicable",
        "passed": True,
        "details": f"not applicable: {WHY}",
        "seconds": 0.0,
        "applicable": False,
    }


def test_report_keeps_not_applicable_apart() -> None:
    report = QAReport("x", "1.0.0")
    report.checks = [
        CheckResult("replay_determinism", True, "ok"),
        CheckResult("throughput", False, "too slow"),
        CheckResult("heldout_exclusion", True, f"not applicable: {WHY}", applicable=False),
    ]
    assert [c.status for c in report.checks] == ["pass", "fail", "not_applicable"]
    assert report.not_applicable == ["heldout_exclusion"]
    assert report.as_json()["not_applicable"] == ["heldout_exclusion"]
    assert report.summary() == (
        "1 of 3 checks passed; 1 failed: throughput; not applicable: heldout_exclusion"
    )
    report.checks = report.checks[:1]
    assert report.summary() == "all checks passed"
