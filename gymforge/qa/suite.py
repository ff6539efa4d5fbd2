"""Run the QA checks against a target and report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymforge.qa.checks import MODULES
from gymforge.qa.checks.common import CheckResult, QAOptions, timed
from gymforge.qa.fresh import prestart
from gymforge.qa.target import QATarget
from gymforge.qa_profile import CHECK_NAMES
from gymforge.verify.services import run_services

CHECKS: dict[str, Any] = {m.NAME: m for m in MODULES}
assert tuple(CHECKS) == CHECK_NAMES, "check modules and CHECK_NAMES disagree"


@dataclass
class QAReport:
    env: str
    version: str
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def not_applicable(self) -> list[str]:
        """The checks that ran nothing (declared not applicable): ``passed`` does not cover them."""
        return [c.name for c in self.checks if not c.applicable]

    def summary(self) -> str:
        """One line: how many checks passed, failed, and ran nothing."""
        failed = [c.name for c in self.checks if not c.passed]
        if not failed and not self.not_applicable:
            return "all checks passed"
        ran = len(self.checks) - len(self.not_applicable)
        line = f"{ran - len(failed)} of {len(self.checks)} checks passed"
        if failed:
            line += f"; {len(failed)} failed: {', '.join(failed)}"
        if self.not_applicable:
            line += f"; not applicable: {', '.join(self.not_applicable)}"
        return line

    def as_json(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "version": self.version,
            "passed": self.passed,
            "not_applicable": self.not_applicable,
            "checks": [c.as_json() for c in self.checks],
        }


def run_check(name: str, target: QATarget, opts: QAOptions) -> CheckResult:
    """Run one check, honouring declared not-applicable entries (user environments only)."""
    if name not in CHECKS:
        raise ValueError(f"unknown check {name!r}; checks: {', '.join(CHECK_NAMES)}")
    reason = target.profile.not_applicable.get(name)
    if reason is not None:
        if target.builtin:
            return CheckResult(
                name,
                False,
                "built-in environments may not declare a check "
                f"not applicable (declared: {reason})",
            )
        return CheckResult(name, True, f"not applicable: {reason}", applicable=False)
    return timed(name, CHECKS[name].run, target, opts)


def run_qa(
    target: QATarget,
    opts: QAOptions | None = None,
    only: Sequence[str] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
) -> QAReport:
    """Run the checks in order. The fresh process the cross-process checks share, and the
    verifiers' services (``gymforge.verify.services``: a sandbox, a math pool) live for this
    run only (the caller's active services are used when their settings are the target's)."""
    with run_services(target.settings):  # the run owns them: closed at its end
        opts = opts or QAOptions()
        report = QAReport(target.spec.id, target.spec.version)
        names = list(only or CHECK_NAMES)
        if {"replay_determinism", "reset_isolation"} & set(names):
            prestart(target)
        for name in names:  # work the fresh process can start on while earlier checks run
            prefetch = getattr(CHECKS.get(name), "prefetch", None)
            if prefetch is not None and name not in target.profile.not_applicable:
                prefetch(target, opts)
        try:
            for name in names:
                result = run_check(name, target, opts)
                report.checks.append(result)
                if on_result is not None:
                    on_result(result)
        finally:
            target.close_fresh_process()
        return report
