"""swe passes all ten QA checks (oracle >= 0.95, random <= 0.05, noop 0), shared with the
suite's all-built-ins test."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gymforge.envs.swe import SweEnv
from gymforge.qa import QAReport
from gymforge.sandbox.doctor import bwrap_works

pytestmark = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")


def test_declared_baselines_are_the_issues() -> None:
    b = SweEnv.qa.baselines
    assert (b.oracle_min, b.bad_max, b.noop_max, b.bad_policy) == (0.95, 0.05, 0.0, "random")
    assert SweEnv.qa.verifier_kinds == ("state",)
    assert {c.name for c in SweEnv.qa.redteam} >= {
        "delete_tests",
        "skip_tests",
        "conftest_force_pass",
        "special_case_issue",
        "sitecustomize",
        "patch_runner",
        "exit_early_zero",
    }


@pytest.mark.xdist_group("qa-swe")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    report = builtin_qa_report("swe")
    assert report.passed, [(c.name, c.details) for c in report.checks if not c.passed]
    base = next(c for c in report.checks if c.name == "scripted_baselines").metrics
    assert base["oracle"] >= 0.95 and base["bad"] <= 0.05 and base["noop"] == 0.0
