"""The count behind a code verdict (``Tally``) and the verdict it makes (``verdict``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymforge.core.verdict import Verdict
from gymforge.sandbox import CallStatus, Result, Status

VERIFIER = "code/1"
MAX_CASES = 20
SHORT = 500


@dataclass
class Tally:
    run: int = 0
    passed: int = 0
    timeouts: int = 0
    crashes: int = 0
    unserialisable: int = 0
    limits: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    cases: list[dict[str, Any]] | None = None  # per-test detail, when asked for
    stopped: bool = False  # the check ended on an error outside its asserts (``run_humaneval``)
    chance: float = 0.0  # the fraction an answer doing no work passes (``chance.chance``)
    call_limit_s: float | None = None  # the per-call limit the task ran under
    slowest_ms: float | None = None  # wall clock: a timing fact, never a fact of the answer

    def fresh(self) -> Tally:
        """An empty tally in the same mode (with per-test detail or without)."""
        return Tally(cases=[] if self.cases is not None else None, call_limit_s=self.call_limit_s)

    def took(self, seconds: float | None) -> None:
        """One call's (or stdio run's) wall time, for ``slowest_call_ms``."""
        if seconds is not None:
            ms = float(seconds) * 1e3
            self.slowest_ms = ms if self.slowest_ms is None else max(self.slowest_ms, ms)

    def case(self, ok: bool, **what: Any) -> None:
        if self.cases is not None and len(self.cases) < MAX_CASES:
            self.cases.append({"ok": ok, **{k: _short(v) for k, v in what.items()}})

    def call(self, status: CallStatus) -> None:
        if status is CallStatus.TIMEOUT:
            self.timeouts += 1
        elif status in (CallStatus.CRASHED, CallStatus.PROTOCOL_ERROR):
            self.crashes += 1
        elif status in (CallStatus.UNSERIALISABLE, CallStatus.TOO_LARGE, CallStatus.REF):
            self.unserialisable += 1

    def result(self, r: Result | None) -> None:
        if r is not None:
            self.limits.update(r.limits_hit.names())


def _short(v: Any) -> Any:
    if isinstance(v, str) and len(v) > SHORT:
        return v[:SHORT] + f"... [{len(v) - SHORT} more characters]"
    return v


def _score(t: Tally) -> float:
    """Partial credit: the fraction of tests passed above ``t.chance``, what an answer doing
    no work passes (a constant, an echoed argument, one builtin step on the arguments or the
    prompt's examples earn 0, a full pass 1). A check that stopped early
    pays none: the tests it never reached are unknown, and an answer able to stop it
    (raising where it would answer wrong) would choose a short check of the tests it passes."""
    if not t.run or t.stopped:
        return 0.0
    raw = t.passed / t.run
    if raw >= 1.0:
        return 1.0
    if t.chance >= 1.0:
        return 0.0
    return max(0.0, min(1.0, (raw - t.chance) / (1.0 - t.chance)))


def verdict(
    t: Tally,
    mode: str,
    *,
    reason: str | None = None,
    status: Status | None = None,
    trainable: bool = True,
) -> Verdict:
    passed = t.run > 0 and t.passed == t.run and reason is None
    if reason is None and not passed:
        reason = (
            "timeout"
            if t.timeouts
            else "crash"
            if t.crashes
            else "no_tests"
            if t.run == 0
            else "wrong_answer"
        )
    facts: dict[str, Any] = {
        "mode": mode,
        "tests_run": t.run,
        "tests_passed": t.passed,
        "timeouts": t.timeouts,
        "crashes": t.crashes,
        "unserialisable": t.unserialisable,
        "limits_hit": sorted(t.limits),
    }
    if status is not None:
        facts["status"] = str(status)
    if not trainable:
        facts["trainable"] = False
    if t.notes:
        facts["notes"] = t.notes[:5]
    if t.cases is not None:
        facts["cases"] = t.cases
    if t.chance:
        facts["chance"] = round(t.chance, 4)
    if t.call_limit_s is not None and t.slowest_ms is not None:  # timing facts (split off)
        facts["slowest_call_ms"] = round(t.slowest_ms, 3)
        facts["call_limit_ms"] = round(t.call_limit_s * 1e3, 3)
    return Verdict(
        passed=passed,
        score=_score(t),
        reason=None if passed else reason,
        facts=facts,
        verifier=VERIFIER,
    )
