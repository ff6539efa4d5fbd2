"""The ``calls`` kind (procedural families): the hidden tests, ``{"args", "expected"}``
each, run as one batch job of the function-call service; every return value comes back as
plain builtins and is compared here with ``strict_equal`` (``True`` is not ``1``). Expected
values never leave this process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymforge.core.verdict import Verdict
from gymforge.sandbox import Call, CallStatus, SandboxJob, Status
from gymforge.verify.code.shared import (
    Judging,
    SandboxDown,
    from_json,
    limits_for,
    strict_equal,
)
from gymforge.verify.code.tally import Tally
from gymforge.verify.code.tally import verdict as _verdict


async def judge_calls(
    judge: Judging,
    truth: dict[str, Any],
    code: str,
    t: Tally,
    files: Mapping[str, str | bytes] | None = None,
) -> Verdict:
    """One batch job, compared here. ``files``: extra files in the candidate's job
    directory (``CodeJudge.ajudge``)."""
    entry, tests = truth["entry_point"], truth["tests"]
    limits = limits_for(judge.config.limits, truth, len(tests))
    t.call_limit_s = limits.call_timeout
    job = SandboxJob(
        source=code,
        files=dict(files or {}),
        calls=[Call(name=entry, args=tuple(t["args"])) for t in tests],
        limits=limits,
        respawn=False,  # one timeout or crash ends the run: the rest count as failed
    )
    r = await judge.backend.arun(job)
    t.result(r)
    results = r.calls or []
    for i, test in enumerate(tests):
        t.run += 1
        c = results[i] if i < len(results) else None
        expected = from_json(test["expected"])
        ok = c is not None and c.status is CallStatus.OK and strict_equal(c.value, expected)
        if t.cases is not None:
            got = (repr(c.value) if c.ok else f"{c.status}: {c.error or ''}") if c else "not run"
            args = ", ".join(repr(from_json(a)) for a in test["args"])
            t.case(ok, call=f"{entry}({args})", expected=repr(expected), got=got)
        if c is None:
            continue
        t.call(c.status)
        t.took(c.wall_time)
        t.passed += ok
    load_ok = r.load.ok if r.load is not None else r.status is Status.OK
    if not load_ok:
        t.notes.append(f"load failed: {r.load.error_type if r.load else r.status}")
    if r.status is Status.INTERNAL_ERROR:
        raise SandboxDown(f"sandbox internal error: {r.error}")
    return _verdict(t, "calls", status=r.status)
