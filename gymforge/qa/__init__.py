"""Environment QA: the ten checks, the red-team library, and the pytest mixin."""

from gymforge.qa.checks.common import CheckResult, QAOptions
from gymforge.qa.profile import (
    CHECK_NAMES,
    Baselines,
    QAProfile,
    RedTeamCase,
    ThroughputBudget,
)
from gymforge.qa.suite import QAReport, run_check, run_qa
from gymforge.qa.target import QATarget

__all__ = [
    "CHECK_NAMES",
    "Baselines",
    "CheckResult",
    "QAOptions",
    "QAProfile",
    "QAReport",
    "QATarget",
    "RedTeamCase",
    "ThroughputBudget",
    "run_check",
    "run_qa",
]
