"""HumanEval and MBPP: the dataset's test code runs here, the candidate in the sandbox
(``judge`` has the contract). ``session_judge`` first tries the planned batch (``planned``:
every call the test makes is literal, ``plan.plan_calls``; one job, then the test answered
from it call by call) and otherwise, or when the test strays from the plan, judges live
(``in_session``: one round trip per call into an interactive session). Either way the test
runs in ``_run_check``, each candidate name a proxy over a ``Transport``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core.verdict import Verdict
from gymforge.sandbox import (
    Call,
    CallResult,
    CallStatus,
    CandidateCallError,
    Limits,
    LoadInfo,
    Result,
    SandboxJob,
    Status,
)
from gymforge.verify.code.budget import MAX_CHECK_LINES, OverBudget, line_budget
from gymforge.verify.code.chance import chance
from gymforge.verify.code.checks import (
    candidate_module,
    check_namespace,
    run_humaneval,
    run_mbpp,
)
from gymforge.verify.code.flood import refuse_flooded
from gymforge.verify.code.names import tested_builtins
from gymforge.verify.code.plan import PlanMiss, PlannedCall, plan_calls
from gymforge.verify.code.remote import (
    ArgEncoder,
    ArgumentRefused,
    Remote,
    RemoteValueUsed,
    Unjudgeable,
)
from gymforge.verify.code.shared import Judging, SandboxDown, limits_for
from gymforge.verify.code.tally import Tally
from gymforge.verify.code.tally import verdict as _verdict

Module = tuple[str, str, str]  # (prelude, candidate, postlude): ``checks.candidate_module``
Transport = Callable[[str, Any, Any, "Remote | None", Callable[[], tuple[bytes, bool]]], CallResult]


def session_judge(judge: Judging, truth: dict[str, Any], code: str, tally: Tally) -> Verdict:
    """The verdict on ``code`` for a HumanEval or MBPP task: planned when the plan holds,
    else live; ``reason == "unjudgeable"`` (not trainable) when an argument cannot cross."""
    tested = tested_builtins(truth, code)
    module = candidate_module(truth, code)
    tests = truth.get("test_list") or str(truth.get("test") or "").split("assert")[1:]
    limits = limits_for(judge.config.limits, truth, len(tests))
    tally.call_limit_s = limits.call_timeout
    try:
        plan = plan_calls(truth, tested)
        if plan:
            verdict = planned(judge, truth, module, plan, tally, tested, limits)
            if verdict is not None:
                return verdict
        return in_session(judge, truth, module, tally, tested, limits)
    except Unjudgeable as e:
        t = tally.fresh()
        t.notes.append(f"unjudgeable: {str(e)[:200]}")
        return _verdict(t, str(truth["kind"]), reason="unjudgeable", trainable=False)


def _run_check(
    truth: dict[str, Any], t: Tally, transport: Transport, tested: frozenset[str]
) -> None:
    """Run the dataset's test code here, each candidate name a proxy over ``transport``;
    values that are not plain data stay in the sandbox (``remote``). The test code runs
    under a budget of executed lines (``budget``): its loops may run as long as the
    answer's values say (``test_code_check_loops_on_the_answer_red18.py``)."""
    ns, context = check_namespace(truth)
    gen = [0]  # bumped when the candidate process is replaced: its kept objects are gone
    encoder = ArgEncoder(context, lambda: gen[0])

    def invoke(name: str, target: Remote | None, args: Any, kwargs: Any) -> Any:
        if t.timeouts:  # the call budget is spent: fail fast
            raise CandidateCallError(_not_run(name))
        if target is not None and object.__getattribute__(target, "_gen") != gen[0]:
            raise RemoteValueUsed("the value died with the candidate process that made it")
        try:
            res = transport(name, args, kwargs, target, lambda: encoder.encode(args, kwargs))
        except ArgumentRefused as e:  # a failed test: the candidate's value is too big
            t.notes.append(f"{name}: {e}"[:200])
            raise
        if res.ok:
            res = refuse_flooded(res, t.notes)  # the test would hash it
        if res.restarted:
            gen[0] += 1
        t.call(res.status)
        t.took(res.wall_time)
        if res.status is CallStatus.REF and res.handle is not None:
            return Remote(res.handle, gen[0], res.value_type or "?", call_remote)
        if not res.ok:
            raise CandidateCallError(res)
        return res.value

    def call_remote(r: Remote, args: Any, kwargs: Any) -> Any:
        return invoke(r.describe(), r, args, kwargs)

    def proxy_for(name: str) -> Callable[..., Any]:
        def proxy(*args: Any, **kwargs: Any) -> Any:
            return invoke(name, None, args, kwargs)

        proxy.__name__ = name
        proxy.__gf_remote_name__ = name  # type: ignore[attr-defined]
        return proxy

    try:
        with line_budget(MAX_CHECK_LINES):
            if kind_is(truth, "humaneval"):
                run_humaneval(truth, ns, proxy_for, t)
            else:
                run_mbpp(truth, ns, proxy_for, t, tested)
    except OverBudget:  # the answer's values drove the check's loops: stopped, no credit
        t.run += 1
        t.stopped = True
        t.notes.append(f"check stopped: more than {MAX_CHECK_LINES} lines of test code")


def in_session(
    judge: Judging,
    truth: dict[str, Any],
    module: Module,
    tally: Tally,
    tested: frozenset[str],
    limits: Limits | None = None,
) -> Verdict:
    """Live: every call the test makes is one round trip into an interactive session."""
    t = tally.fresh()
    job = _job(judge, module, limits, [])
    with judge.backend.session(job) as s:  # type: ignore[attr-defined]

        def transport(
            name: str,
            args: Any,
            kwargs: Any,
            target: Remote | None,
            encode: Callable[[], tuple[bytes, bool]],
        ) -> CallResult:
            payload, tree = encode()
            handle = None if target is None else object.__getattribute__(target, "_handle")
            return s.call_encoded(name, payload, tree=tree, keep=True, target=handle)  # type: ignore[no-any-return]

        _run_check(truth, t, transport, tested)
        load = s.load
    return _session_verdict(truth, t, s.result, load)


def planned(
    judge: Judging,
    truth: dict[str, Any],
    module: Module,
    plan: tuple[PlannedCall, ...],
    tally: Tally,
    tested: frozenset[str],
    limits: Limits | None = None,
) -> Verdict | None:
    """Batch: the planned calls run as one job first, then the test runs here and each
    call it makes is answered from the batch, in order. The same verdict as live (the
    candidate sees the same calls in the same order, crashes reload it, the first timeout
    stops it); None when the test strays from the plan, and the caller goes live."""
    calls = [Call(name=c.name, args=c.args, kwargs=c.kwargs) for c in plan]
    r = judge.backend.run(_job(judge, module, limits, calls, stop_on_timeout=True))
    if r.status is Status.INTERNAL_ERROR:
        raise SandboxDown(f"sandbox internal error: {r.error}")
    answers = r.calls or []
    if len(answers) != len(plan):
        return None
    t = tally.fresh()  # a plan that misses leaves nothing behind
    pos = 0

    def answer(name: str, args: Any, kwargs: Any, target: Remote | None, encode: Any) -> CallResult:
        nonlocal pos
        if target is not None or pos >= len(plan) or not plan[pos].matches(name, args, kwargs):
            raise PlanMiss
        if answers[pos].status is CallStatus.UNSERIALISABLE:
            raise PlanMiss  # live, the value would stay in the sandbox for later use
        pos += 1
        return answers[pos - 1]

    try:
        _run_check(truth, t, answer, tested)
    except PlanMiss:
        return None
    return _session_verdict(truth, t, r, r.load)


def _session_verdict(
    truth: dict[str, Any], t: Tally, r: Result | None, load: LoadInfo | None
) -> Verdict:
    """The verdict of a HumanEval or MBPP check, live or planned, from its tally: partial
    credit is what an answer doing no work does not pass (``chance``)."""
    t.chance = chance(truth)
    t.result(r)
    if load is not None and not load.ok:
        t.notes.append(f"load failed: {load.error_type}")
    return _verdict(t, str(truth["kind"]))


def _job(
    judge: Judging,
    module: Module,
    limits: Limits | None,
    calls: list[Call],
    stop_on_timeout: bool = False,
) -> SandboxJob:
    """The sandbox job of the candidate's ``module`` with these ``calls``."""
    prelude, code, postlude = module
    return SandboxJob(
        source=code,
        prelude=prelude,
        postlude=postlude,
        limits=limits or judge.config.limits,
        calls=calls,
        stop_on_timeout=stop_on_timeout,
    )


def kind_is(truth: dict[str, Any], kind: str) -> bool:
    return truth.get("kind") == kind


def _not_run(name: str) -> CallResult:
    return CallResult(id=-1, name=name, status=CallStatus.NOT_RUN, error="call budget spent")
