"""Zygote-pool backends: ``LocalBackend`` (bubblewrap, the default) and ``UnsafeBackend``.

``workers`` long-lived sandboxes, each with one zygote, serve jobs one at a time; ``run`` takes
an idle worker, compiles if needed (artefacts cached), sends the job and turns the reply into a
``Result``. A worker that dies or stops answering is killed and respawned in the background;
the job it held gets an ``internal_error`` result (or, past the host-side deadline, a
``timeout`` result); callers never hang. That plumbing is ``prefork.WorkerPool``, shared with
the math verifier; it launches workers from one long-lived thread because
``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked bwrap exits.
``close()`` (also run at interpreter exit) stops every worker and removes its cgroups
and runtime files; no process survives it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from gymforge.core.errors import ConfigError
from gymforge.sandbox.backend import BaseBackend
from gymforge.sandbox.cgroups import remove_stale
from gymforge.sandbox.jobs import compile_request, job_files, run_request, to_result
from gymforge.sandbox.languages import ArtefactCache, Language, get_language
from gymforge.sandbox.launch import BwrapLauncher, Runtime, UnsafeLauncher
from gymforge.sandbox.models import LimitsHit, Result, SandboxJob, Status
from gymforge.sandbox.prefork import WorkerPool
from gymforge.sandbox.worker import Worker, WorkerDied

HOST_GRACE = 10.0  # default seconds the host waits beyond a job's limits before killing a worker
ZYGOTE_HEADROOM = 96 << 20  # memory cgroup allowance for the zygote itself


def default_python() -> str:
    """The interpreter for zygotes: the system ``python3`` (readable by any uid)."""
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(cand, os.X_OK):
            return cand
    return sys.executable


class ZygotePool(BaseBackend):
    """A pool of zygote workers behind the ``Backend`` interface."""

    name = "zygote"
    worker_death_retries = 0  # times a job whose worker died is retried on a fresh one

    def __init__(
        self,
        launcher: Any,
        workers: int = 2,
        *,
        cache_dir: Path | str | None = None,
        cgroups: bool = True,
        ready_timeout: float = 60.0,
        host_grace: float = HOST_GRACE,
    ) -> None:
        if workers < 1:
            raise ConfigError("a sandbox backend needs at least one worker")
        super().__init__()
        self.capacity = workers
        self.host_grace = host_grace
        self.launcher = launcher
        self.cache = ArtefactCache(Path(cache_dir) if cache_dir else None)
        if cgroups:
            remove_stale()
        self.runtime = Runtime()
        self.workers = [
            Worker(i, launcher, self.runtime, cgroups=cgroups, ready_timeout=ready_timeout)
            for i in range(workers)
        ]
        self._workers = WorkerPool(self.workers, "sandbox backend")
        try:
            self._workers.start()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ pool
    def acquire(self) -> contextlib.AbstractContextManager[Worker]:
        """Exclusive use of one live worker (restarting it first if it died)."""
        return self._workers.acquire()

    # ------------------------------------------------------------------ run
    def run(self, job: SandboxJob) -> Result:
        lang = get_language(job.language)
        if job.mode != "program" and lang.kind != "python":
            raise ConfigError(f"{job.mode} jobs need a Python language, not {lang.name!r}")
        t0 = time.monotonic()
        for _ in range(self.worker_death_retries):
            with contextlib.suppress(WorkerDied), self.acquire() as w:
                return self._run_on(w, job, lang)
        try:
            with self.acquire() as w:
                return self._run_on(w, job, lang)
        except WorkerDied as e:
            return Result(
                status=Status.INTERNAL_ERROR,
                error=str(e),
                backend=self.name,
                wall_time=time.monotonic() - t0,
            )

    def nproc_slack(self, w: Worker) -> int:
        """Extra ``RLIMIT_NPROC`` room: the zygote counts as one task of the uid; with a pids
        cgroup the rlimit is set a little higher so the cgroup, whose ``max`` events we can
        count, is what stops a fork or thread bomb."""
        return 4 if w.has_pids_cgroup else 1

    def memory_cap(self, job_memory: int, lang: Language | None = None) -> int:
        """The worker's memory cgroup limit for a job: a backstop above RLIMIT_AS (job memory
        plus its tmpfs plus the zygote), or *the* limit for runtimes without RLIMIT_AS."""
        if lang is not None and not lang.rlimit_as:
            return job_memory + ZYGOTE_HEADROOM
        return job_memory + getattr(self.launcher, "jobdir_bytes", 0) + ZYGOTE_HEADROOM

    def _run_on(self, w: Worker, job: SandboxJob, lang: Language) -> Result:
        extra: dict[str, Any] = {"worker": w.index, "backend": self.name}
        prog = None
        if lang.compile is not None:
            prog, failed = self._compile(w, job, lang, extra)
            if failed is not None:
                return failed
        hdr, blobs = run_request(
            job, lang, w.paths.jobdir, prog, self.nproc_slack(w), w.has_memory_cgroup
        )
        w.limit(
            self.memory_cap(job.limits.memory_bytes, lang),
            max(job.limits.processes, lang.min_processes),
        )
        c0 = w.counters_before()
        try:
            f, out = w.request(hdr, blobs, job.limits.wall_time + self.host_grace)
        except TimeoutError:
            return Result(
                status=Status.TIMEOUT,
                limits_hit=LimitsHit(wall_time=True),
                error="killed from the host: the worker did not answer in time",
                wall_time=job.limits.wall_time + self.host_grace,
                **extra,
            )
        c1 = w.counters()
        if f.get("ev") != "done":
            w.kill()
            return Result(status=Status.INTERNAL_ERROR, error=f"bad reply {f}", **extra)
        if not f.get("clean", True):
            w.kill()  # the job directory could not be wiped: never reuse this worker
        return to_result(f, out, job, oom=c1[0] > c0[0], pids_hit=c1[1] > c0[1], **extra)

    def _compile(
        self, w: Worker, job: SandboxJob, lang: Language, extra: dict[str, Any]
    ) -> tuple[bytes | None, Result | None]:
        """The job's compiled program (from the cache, or compiled now), or the result that
        ends the job (a compile error)."""
        assert lang.compile is not None
        key = ArtefactCache.key(lang, lang.compile, job_files(job, lang))
        cached = self.cache.get(key)
        if cached is not None:
            extra["compile_cached"] = True
            return cached, None
        extra["compile_cached"] = False
        hdr, blobs = compile_request(job, lang, w.paths.jobdir, self.nproc_slack(w))
        limits = job.compile_limits
        w.limit(self.memory_cap(limits.memory_bytes), limits.processes)
        try:
            f, out = w.request(hdr, blobs, limits.wall_time + self.host_grace)
            w.counters()  # a compiler's OOM kill must not be charged to the program
        except TimeoutError:
            return None, Result(
                status=Status.COMPILE_ERROR,
                error="compiler: host-side kill",
                limits_hit=LimitsHit(wall_time=True),
                **extra,
            )
        text = (out[0] + out[1]).decode("utf-8", "replace") if len(out) >= 2 else ""
        if f.get("setup_error"):
            return None, Result(
                status=Status.INTERNAL_ERROR, error=f["setup_error"], compile_output=text, **extra
            )
        if f.get("exit_code") == 0 and len(out) > 2:
            self.cache.put(key, out[2])
            return out[2], None
        r = to_result(f, out, job.model_copy(update={"limits": limits}), False, False)
        return None, Result(
            status=Status.COMPILE_ERROR,
            exit_code=f.get("exit_code"),
            signal=f.get("signal"),
            compile_output=text,
            limits_hit=r.limits_hit,
            wall_time=r.wall_time,
            error=f.get("collect_error"),
            **extra,
        )

    # ------------------------------------------------------------------ sessions
    def session(self, job: SandboxJob) -> Any:
        """An interactive function-call session (see ``CallSession``); holds one worker."""
        from gymforge.sandbox.session import CallSession

        return CallSession(self, job)

    # ------------------------------------------------------------------ shutdown
    def close(self) -> None:
        """Stop every worker, remove cgroups and runtime files. Idempotent."""
        if getattr(self, "_closing", False):
            return
        self._closing = True
        super().close()
        pool = getattr(self, "_workers", None)
        if pool is not None:
            pool.close()
        for w in getattr(self, "workers", []):
            w.remove()
        runtime = getattr(self, "runtime", None)
        if runtime is not None:
            runtime.remove()

    def worker_info(self) -> list[dict[str, Any]]:
        return [
            dict(
                w.info,
                index=w.index,
                alive=w.alive,
                starts=w.starts,
                cgroups=w.cgroup.available if w.cgroup else [],
            )
            for w in self.workers
        ]


class LocalBackend(ZygotePool):
    """The default backend: one bubblewrap sandbox + zygote per worker (see ``launch``)."""

    name = "local"

    def __init__(
        self,
        workers: int = 2,
        *,
        python: str | None = None,
        uid_base: int = 60000,
        seccomp: bool = True,
        jobdir_bytes: int = 256 << 20,
        ro_binds: tuple[tuple[str, str], ...] = (),
        preimport: tuple[str, ...] = (),
        preimport_path: tuple[str, ...] = (),
        cache_dir: Path | str | None = None,
        cgroups: bool = True,
        ready_timeout: float = 60.0,
        host_grace: float = HOST_GRACE,
    ) -> None:
        launcher = BwrapLauncher(
            python=python or default_python(),
            uid_base=uid_base,
            seccomp=seccomp,
            jobdir_bytes=jobdir_bytes,
            ro_binds=ro_binds,
            preimport=preimport,
            preimport_path=preimport_path,
        )
        super().__init__(
            launcher,
            workers,
            cache_dir=cache_dir,
            cgroups=cgroups,
            ready_timeout=ready_timeout,
            host_grace=host_grace,
        )


UNSAFE_BANNER = """
################################################################################
#  WARNING: gymforge is running untrusted code WITHOUT ISOLATION               #
#  (--unsafe-no-isolation). Candidate programs run as {user:<26} #
#  with only rlimits: they can read and write your files, use the network,     #
#  and leave processes behind. Use this only on a throw-away machine.          #
################################################################################
"""


class UnsafeBackend(ZygotePool):
    """No sandbox: the zygote and jobs run as the current user with rlimits only. Exists for
    machines where bubblewrap cannot run; ``get_backend`` hands it out only on explicit
    request, and it prints a loud warning to stderr."""

    name = "unsafe"

    def __init__(
        self,
        workers: int = 2,
        *,
        python: str | None = None,
        cache_dir: Path | str | None = None,
        cgroups: bool = True,
        ready_timeout: float = 60.0,
        quiet: bool = False,
    ) -> None:
        if not quiet:
            user = f"uid {os.getuid()}" + (" (ROOT!)" if os.getuid() == 0 else "")
            sys.stderr.write(UNSAFE_BANNER.format(user=user))
            sys.stderr.flush()
        launcher = UnsafeLauncher(python=python or default_python())
        super().__init__(
            launcher, workers, cache_dir=cache_dir, cgroups=cgroups, ready_timeout=ready_timeout
        )
