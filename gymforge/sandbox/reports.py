"""The judge's side of the in-sandbox test mode: check what came over the control channel.

A report is trusted only if it is exactly what the trusted harness writes: one ``test`` record
per expected test, in order (``seq`` 0..n-1, matching names), each carrying the job's nonce,
then one ``tests_done`` record with the right count, and nothing else. Anything extra, out of
order, or with a wrong nonce marks the whole report ``forged`` and no test counts as passed.
A harness killed midway leaves the report incomplete: the missing tests count as failed.
Stdout and the exit code play no part.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gymforge.sandbox.models import Result, TestSpec


class TestReport(BaseModel):
    """What the judge may conclude from one tests-mode job."""

    __test__ = False
    model_config = ConfigDict(frozen=True)

    expected: int
    passed: list[str] = Field(default_factory=list)
    failed: dict[str, str] = Field(default_factory=dict)  # name -> exception type or reason
    complete: bool = False
    forged: bool = False
    problems: list[str] = Field(default_factory=list)

    @property
    def tests_passed(self) -> int:
        return 0 if self.forged else len(self.passed)

    @property
    def all_passed(self) -> bool:
        return self.complete and not self.forged and len(self.passed) == self.expected


def verify_test_reports(result: Result, spec: TestSpec) -> TestReport:
    names = list(spec.names)
    passed: list[str] = []
    failed: dict[str, str] = {}
    problems: list[str] = []
    done = False
    seq = 0
    for rec in result.reports or []:
        if rec.get("nonce") != spec.nonce:
            problems.append("a record with a wrong nonce")
            continue
        if done:
            problems.append("records after tests_done")
            continue
        ev = rec.get("ev")
        if ev == "tests_done":
            if rec.get("count") != len(names) or seq != len(names):
                problems.append("tests_done with a wrong count")
            done = True
        elif ev == "test":
            if seq >= len(names) or rec.get("seq") != seq or rec.get("name") != names[seq]:
                problems.append(f"unexpected test record at position {seq}")
                break
            if rec.get("passed") is True:
                passed.append(names[seq])
            else:
                failed[names[seq]] = str(rec.get("etype") or "failed")
            seq += 1
        else:
            problems.append(f"unknown record {ev!r}")
    for name in names[seq:]:
        failed.setdefault(name, "not reported")
    forged = bool(problems)
    return TestReport(
        expected=len(names),
        passed=[] if forged else passed,
        failed=failed if not forged else dict.fromkeys(names, "forged report"),
        complete=done and seq == len(names) and not forged,
        forged=forged,
        problems=problems,
    )
