"""The ``stdio`` kind (``tests: [{input, output}]``): one program run per test, its stdout
compared here line by line (``normalise_output``: trailing whitespace on each line and
trailing empty lines are ignored, nothing else; a missing or extra line fails the test)."""

from __future__ import annotations

from typing import Any

from gymforge.core.verdict import Verdict
from gymforge.sandbox import Result, SandboxJob, Status
from gymforge.verify.code.shared import Judging, SandboxDown, normalise_output, stdio_limits_for
from gymforge.verify.code.tally import Tally
from gymforge.verify.code.tally import verdict as _verdict


async def judge_stdio(
    judge: Judging, truth: dict[str, Any], code: str, lang: str, t: Tally
) -> Verdict:
    """One run per test, every line compared here; a compile error fails every test."""
    tests = truth["tests"]
    limits = stdio_limits_for(judge.config.stdio_limits, truth)
    t.call_limit_s = limits.wall_time
    jobs = [
        SandboxJob(language=lang, source=code, stdin=str(tc["input"]), limits=limits)
        for tc in tests
    ]
    results: list[Result] = []
    if jobs:  # compile once (cached by hash) before fanning out
        results.append(await judge.backend.arun(jobs[0]))
        if results[0].status is Status.COMPILE_ERROR:
            t.run = len(tests)
            t.notes.append("compile error")
            return _verdict(t, "stdio", reason="compile_error", status=Status.COMPILE_ERROR)
        results += await judge.backend.arun_many(jobs[1:])
    for tc, r in zip(tests, results, strict=True):
        t.run += 1
        t.result(r)
        t.took(r.wall_time)
        if r.status is Status.INTERNAL_ERROR:
            raise SandboxDown(f"sandbox internal error: {r.error}")
        ok = r.status is Status.OK and normalise_output(r.stdout) == normalise_output(
            str(tc["output"])
        )
        if r.status is Status.TIMEOUT:
            t.timeouts += 1
        elif r.status is not Status.OK:
            t.crashes += 1
        t.passed += ok
        t.case(
            ok,
            input=tc["input"],
            expected=tc["output"],
            got=r.stdout,
            status=str(r.status),
            stderr=r.stderr[-300:],
        )
    return _verdict(t, "stdio")
