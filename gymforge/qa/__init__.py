"""Environment QA: the ten checks, the red-team library, and the pytest mixin.

The names below load on first use: environments import ``gymforge.qa_profile`` to declare
their ``QAProfile``, and that must not pull in the checks (hypothesis, jsonschema) with it,
neither in every process that merely uses an environment nor in the fresh process of the
cross-process checks, whose start-up is part of every QA run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymforge.qa.checks.common import CheckResult, QAOptions
    from gymforge.qa.suite import QAReport, run_check, run_qa
    from gymforge.qa.target import QATarget
    from gymforge.qa_profile import (
        CHECK_NAMES,
        Baselines,
        QAProfile,
        RedTeamCase,
        ThroughputBudget,
    )

_WHERE = {
    "CheckResult": "gymforge.qa.checks.common",
    "QAOptions": "gymforge.qa.checks.common",
    "CHECK_NAMES": "gymforge.qa_profile",
    "Baselines": "gymforge.qa_profile",
    "QAProfile": "gymforge.qa_profile",
    "RedTeamCase": "gymforge.qa_profile",
    "ThroughputBudget": "gymforge.qa_profile",
    "QAReport": "gymforge.qa.suite",
    "run_check": "gymforge.qa.suite",
    "run_qa": "gymforge.qa.suite",
    "QATarget": "gymforge.qa.target",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'gymforge.qa' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


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
