"""Interactive function-call sessions: load the candidate once, then call it from judge code.

    with backend.session(SandboxJob(source=candidate_src, limits=Limits(call_timeout=2))) as s:
        add = s.function("add")          # a proxy: plain data in, plain data out
        assert add(1, 2) == 3            # compared here, in the judge, on decoded data
        r = s.call("add", "a", 1)         # or the full CallResult (status, error_type, ...)
    result = s.result                    # the job's Result: stdout/stderr, limits, calls

Every call round-trips host -> zygote -> candidate process -> zygote -> host. Arguments and
return values cross as plain JSON (``wire``); a value that is not exact builtin data comes back
as status ``unserialisable``, so an object that claims to equal everything never reaches the
judge's ``==``. A call that times out or crashes the candidate process kills it; the next call
reloads the candidate (``CallResult.restarted``) unless ``SandboxJob.respawn`` is off. The session
holds one worker until ``close()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gymforge.core.errors import InfraError
from gymforge.sandbox.jobs import calls_status, encode_args, run_request, to_call, to_result
from gymforge.sandbox.languages import get_language
from gymforge.sandbox.models import CallResult, LoadInfo, Result, SandboxJob, Status
from gymforge.sandbox.worker import WorkerDied


class CandidateCallError(Exception):
    """Raised by a ``function`` proxy when a call did not return normally."""

    def __init__(self, result: CallResult) -> None:
        super().__init__(
            f"{result.name}: {result.status} {result.error_type or ''} {result.error or ''}".strip()
        )
        self.result = result


class CallSession:
    def __init__(self, pool: Any, job: SandboxJob) -> None:
        lang = get_language(job.language)
        if lang.kind != "python":
            raise InfraError("function-call sessions need a Python language")
        self.job = job.model_copy(update={"calls": []})
        self.calls: list[CallResult] = []
        self.result: Result | None = None
        self._pool = pool
        self.grace = float(getattr(pool, "host_grace", 10.0))
        self._ctx = pool.acquire()
        self.worker = self._ctx.__enter__()
        try:
            hdr, blobs = run_request(
                self.job, lang, self.worker.paths.jobdir, None, pool.nproc_slack(self.worker)
            )
            hdr["op"] = "session"
            self.worker.limit(pool.memory_cap(job.limits.memory_bytes), job.limits.processes)
            self._c0 = self.worker.counters_before()
            self.worker.send(hdr, blobs)  # the load is awaited lazily: calls pipeline behind it
        except BaseException:
            self._release()
            raise
        self._load: LoadInfo | None = None
        self._load_budget = min(job.limits.call_timeout, job.limits.wall_time) + self.grace

    @property
    def load(self) -> LoadInfo:
        """How loading the candidate went (waits for it if needed)."""
        if self._load is None:
            if self._ctx is None:
                raise InfraError("the session's worker is gone")
            try:
                f, _ = self.worker.recv(time.monotonic() + self._load_budget)
                if f.get("ev") != "loaded":
                    raise WorkerDied(f"unexpected reply {f}")
            except (WorkerDied, TimeoutError) as e:
                self._release()
                raise InfraError(f"sandbox worker failed while loading: {e}") from None
            self._load = LoadInfo(
                ok=bool(f.get("ok")),
                error_type=f.get("etype"),
                error=f.get("msg") or f.get("setup_error"),
            )
        return self._load

    def call(
        self, name: str, *args: Any, timeout: float | None = None, **kwargs: Any
    ) -> CallResult:
        """Call ``name(*args, **kwargs)`` in the sandbox. Raises ``InfraError`` only when the
        sandbox itself fails; everything the candidate does is in the ``CallResult``."""
        return self.call_encoded(name, encode_args(args, kwargs), timeout=timeout)

    def call_encoded(
        self,
        name: str,
        payload: bytes,
        *,
        tree: bool = False,
        keep: bool = False,
        target: int | None = None,
        timeout: float | None = None,
    ) -> CallResult:
        """``call`` with arguments already encoded: plain JSON ``[args, kwargs]``, or with
        ``tree`` argument trees (kept objects, module globals, expressions built in the
        sandbox; see ``child_calls._build``). ``target`` calls a kept object instead of ``name``.
        With ``keep``, a return value that is not plain data stays in the sandbox and the
        result has status ``ref`` and its ``handle``."""
        if self.result is not None or self._ctx is None:
            raise InfraError("the session is closed")
        cid = len(self.calls)
        t = timeout or self.job.limits.call_timeout
        msg: dict[str, Any] = {"op": "call", "id": cid, "name": name, "timeout": timeout}
        if tree:
            msg["form"] = "tree"
        if keep:
            msg["keep"] = True
        if target is not None:
            msg["target"] = target
        try:
            self.worker.send(msg, [payload])
        except WorkerDied as e:
            self._release()
            raise InfraError(f"sandbox worker failed during a call: {e}") from None
        self.load  # noqa: B018 - the loaded frame precedes the call's answer
        try:
            hdr, blobs = self.worker.recv(time.monotonic() + t + self.grace)
        except (WorkerDied, TimeoutError) as e:
            self._release()
            raise InfraError(f"sandbox worker failed during a call: {e}") from None
        res = to_call(hdr, blobs, self.job.limits.return_bytes)
        self.calls.append(res)
        return res

    def function(self, name: str, timeout: float | None = None) -> Callable[..., Any]:
        """A proxy for the candidate's ``name``: returns the decoded value, or raises
        ``CandidateCallError`` (timeouts, exceptions, crashes, unserialisable values)."""

        def proxy(*args: Any, **kwargs: Any) -> Any:
            res = self.call(name, *args, timeout=timeout, **kwargs)
            if not res.ok:
                raise CandidateCallError(res)
            return res.value

        proxy.__name__ = name
        return proxy

    def close(self) -> Result:
        """End the session: the candidate process is stopped and the job directory wiped."""
        if self.result is not None:
            return self.result
        try:
            load = self.load
            f, out = self.worker.request({"op": "end"}, [], self.grace + 5)
            c1 = self.worker.counters()
            r = to_result(
                f,
                out,
                self.job,
                oom=c1[0] > self._c0[0],
                pids_hit=c1[1] > self._c0[1],
                worker=self.worker.index,
                backend=self._pool.name,
            )
            status, hit = calls_status(r.status, r.limits_hit, self.calls)
            if status is Status.OK and not load.ok:
                status = Status.RUNTIME_ERROR
            self.result = r.model_copy(
                update={"status": status, "limits_hit": hit, "calls": list(self.calls)}
            )
        except (WorkerDied, TimeoutError, InfraError) as e:
            self.result = Result(
                status=Status.INTERNAL_ERROR,
                error=str(e),
                calls=list(self.calls),
                backend=self._pool.name,
            )
        finally:
            self._release()
        return self.result

    def _release(self) -> None:
        ctx, self._ctx = self._ctx, None
        if ctx is not None:
            ctx.__exit__(None, None, None)

    def __enter__(self) -> CallSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
