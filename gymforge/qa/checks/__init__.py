"""The ten QA checks, one module each, in the order the report lists them."""

from gymforge.qa.checks import (
    distribution_audit,
    error_paths,
    heldout_exclusion,
    replay_determinism,
    reset_isolation,
    scripted_baselines,
    throughput,
    trajectory_schema,
    truncation_accounting,
    verifier_redteam,
)
from gymforge.qa.checks.common import CheckResult, QAOptions

MODULES = (
    replay_determinism,
    reset_isolation,
    scripted_baselines,
    verifier_redteam,
    error_paths,
    truncation_accounting,
    distribution_audit,
    throughput,
    trajectory_schema,
    heldout_exclusion,
)

__all__ = ["MODULES", "CheckResult", "QAOptions"]
