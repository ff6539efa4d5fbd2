"""A pre-forked worker pool with hard, external per-job timeouts (parent side).

Why processes and an external kill: sympy can hang in C-level big-integer arithmetic or in
``str()`` of a huge object, where no signal handler runs, and ``signal.alarm`` only works in
the main thread anyway. So each job runs in a worker process, and a job that overruns its
deadline gets its worker SIGKILLed and replaced.

- Workers are forks of a *zygote* (see ``worker`` and ``zygote``), a clean interpreter
  started once with sympy imported; a respawn is a fork, a few milliseconds.
- The plumbing is the sandbox's: each worker is a ``prefork.FramedWorker`` (``wire`` frames,
  a ready handshake, a deadline on every read, killed when it passes or the stream breaks) in
  a ``prefork.WorkerPool`` (one worker per job at a time, replaced before reuse when it died,
  respawned off the job's path). What is the verifier's own: how a worker is forked and
  isolated (the zygote, ``RLIMIT_AS``, no jail), the retry and the job statistics.
- One driver thread per worker takes jobs from a shared queue, acquires a worker, sends the
  job and waits for the reply until the job's deadline. ``submit`` returns a
  ``concurrent.futures.Future``; ``run`` blocks on it and ``arun`` awaits it without
  blocking the event loop. Any number of threads and coroutines may submit concurrently.
- A worker that died while idle is replaced before the job is sent. A worker that crashes
  mid-job (segfault, OOM kill, SIGKILL) is replaced and the job retried once within the
  same deadline; a second crash returns ``status="crash"``.
- ``latency_ms`` runs from dispatch to result (a retry's respawn included); time spent
  waiting for a free worker is ``queue_ms``.
- ``shutdown()`` (also registered with ``atexit``) kills and reaps every process. If the
  parent dies without it, the zygote sees its control socket close and kills its workers,
  which also die with the zygote (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import queue
import signal
import socket
import threading
import time
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Literal

from gymforge.core.errors import InfraError
from gymforge.sandbox.prefork import FramedWorker, WorkerDied, WorkerPool
from gymforge.verify.math.worker import MAX_FRAME
from gymforge.verify.math.zygote import Zygote

_NAME = "math verifier"
_READY_TIMEOUT_S = 30.0  # a fork of a warm zygote says ready in milliseconds


@dataclass(frozen=True)
class JobResult:
    """``value`` is the worker's reply when ``status == "ok"``."""

    status: Literal["ok", "timeout", "crash"]
    value: dict[str, Any] | None
    latency_ms: float
    queue_ms: float
    attempts: int = 1


class _MathWorker(FramedWorker):
    """A worker forked by the pool's zygote; its pid is the zygote's child, not ours, so it is
    killed by pid and reaped by the zygote on request (at the next start: ``dead``)."""

    label = "math verifier worker"

    def __init__(self, index: int, pool: MathPool) -> None:
        super().__init__(index, ready_timeout=_READY_TIMEOUT_S, max_frame=MAX_FRAME)
        self.pool = pool
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.jobs = 0
        self.dead: list[int] = []  # killed, not yet reaped

    def _launch(self) -> tuple[int, int]:
        self.pool._reap(self.dead)
        self.pid, self.sock = self.pool._fork_worker()
        self.jobs = 0
        return self.sock.fileno(), self.sock.fileno()

    def _on_ready(self, header: dict[str, Any]) -> None:
        self.pool._count("respawns")

    def interrupt(self) -> None:
        _kill(self.pid)

    def _terminate(self) -> None:
        pid, sock = self.pid, self.sock
        self.pid, self.sock = None, None
        _kill(pid)
        if sock is not None:
            sock.close()
        if pid is not None:
            self.dead.append(pid)

    def detach(self) -> None:
        """In a forked child: close the socket, leave the parent's process be."""
        self.broken = True
        if self.sock is not None:
            self.sock.close()


@dataclass
class _Job:
    payload: dict[str, Any]
    timeout_s: float
    future: Future[JobResult]
    enqueued: float


class MathPool:
    """A pool of ``workers`` sympy worker processes (default ``min(2, cpu_count)``).

    Started lazily by the first ``submit`` (or ``start()``). ``memory_mb`` caps each worker's
    extra address space; a worker is recycled after ``max_jobs_per_worker`` jobs. ``test_hooks``
    enables the ``sleep`` and ``segfault`` job ops, for tests only.
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        memory_mb: int = 2048,
        max_jobs_per_worker: int = 10_000,
        test_hooks: bool = False,
    ) -> None:
        self.size = workers if workers is not None else min(2, os.cpu_count() or 1)
        if self.size < 1:
            raise ValueError("workers must be >= 1")
        self.memory_mb = memory_mb
        self.max_jobs_per_worker = max_jobs_per_worker
        self.test_hooks = test_hooks
        self._lock = threading.Lock()
        self._submit_lock = threading.Lock()  # held only to check and queue, or to close
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        procs = [_MathWorker(i, self) for i in range(self.size)]
        self._workers = WorkerPool(procs, _NAME, lifo=True)  # (no work between jobs)
        self._threads: list[threading.Thread] = []
        self._zygote: Zygote | None = None
        self._pid = os.getpid()
        self._started = False
        self.closed = False
        self.stats = {"jobs": 0, "timeouts": 0, "crashes": 0, "respawns": 0}
        self._stats_lock = threading.Lock()
        _all_pools.add(self)

    # ---- lifecycle ----------------------------------------------------------------------
    def start(self) -> MathPool:
        with self._lock:
            self._check_usable()
            if self._started:
                return self
            self._zygote = Zygote()
            self._started = True
            atexit.register(self.shutdown)
            for i in range(self.size):
                t = threading.Thread(target=self._drive, daemon=True, name=f"gymforge-math-{i}")
                t.start()
                self._threads.append(t)
        # Outside the lock: a worker's start may replace a dead zygote (``_restart_zygote``).
        # Jobs submitted meanwhile wait for the workers; one that fails to start is started
        # again on first use.
        with contextlib.suppress(InfraError):
            self._workers.start(strict=False)
        return self

    def _check_usable(self) -> None:
        if self.closed:
            raise InfraError("the math verifier pool is shut down")
        if os.getpid() != self._pid:
            raise InfraError("a math verifier pool cannot be used in a forked child")

    def shutdown(self) -> None:
        """Kill and reap every worker and the zygote; pending jobs fail with ``InfraError``."""
        with self._lock:
            if self.closed or os.getpid() != self._pid:
                return
            with self._submit_lock:  # a job queued from now on is refused, or failed below
                self.closed = True
            started = self._started
        atexit.unregister(self.shutdown)
        if not started:
            return
        for _ in self._threads:
            self._jobs.put(None)
        self._workers.close()
        if self._zygote is not None:
            self._zygote.close()
        for t in self._threads:
            t.join(timeout=5)
        while True:  # fail whatever is still queued
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None and job.future.set_running_or_notify_cancel():
                job.future.set_exception(InfraError("the math verifier pool is shut down"))

    def _detach(self) -> None:
        """In a forked child: close the inherited sockets, leave the parent's processes be."""
        self.closed = self._workers.closed = True
        for w in self._workers.workers:
            w.detach()
        if self._zygote is not None:
            self._zygote.sock.close()

    def pids(self) -> dict[str, Any]:
        """``{"zygote": pid, "workers": [pid, ...]}`` of the live processes (for tests)."""
        z = self._zygote.pid if self._zygote else None
        return {"zygote": z, "workers": [w.pid for w in self._workers.workers if w.pid]}

    # ---- submitting ---------------------------------------------------------------------
    def submit(self, payload: dict[str, Any], timeout_s: float = 1.0) -> Future[JobResult]:
        """Queue one job; the future resolves to a ``JobResult`` (or ``InfraError``, also
        when the pool shuts down with it queued: checked and queued under the lock that
        ``shutdown`` marks the pool closed under, so it is queued before the shutdown fails
        what is left, or refused). That lock is never held for longer than a put: the
        pool's own lock is held while a dead zygote is replaced (a process start), which
        would hold every submit, and so the event loop that calls it."""
        if not self._started:
            self.start()
        fut: Future[JobResult] = Future()
        with self._submit_lock:
            self._check_usable()
            self._jobs.put(_Job(payload, timeout_s, fut, time.perf_counter()))
        return fut

    def run(self, payload: dict[str, Any], timeout_s: float = 1.0) -> JobResult:
        return self.submit(payload, timeout_s).result()

    async def arun(self, payload: dict[str, Any], timeout_s: float = 1.0) -> JobResult:
        if not self._started:  # starting takes a second: never on the event loop
            await asyncio.to_thread(self.start)
        return await asyncio.wrap_future(self.submit(payload, timeout_s))

    # ---- driver threads -----------------------------------------------------------------
    def _drive(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                break
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                with self._workers.acquire() as w:
                    job.future.set_result(self._run(w, job))
                    # after the verdict is out, so it never adds to a job's latency; the pool
                    # starts the worker again before it takes the next job
                    if w.jobs >= self.max_jobs_per_worker:
                        w.kill()
            except BaseException as e:
                if not job.future.done():
                    job.future.set_exception(e if isinstance(e, InfraError) else InfraError(str(e)))

    def _run(self, w: _MathWorker, job: _Job) -> JobResult:
        t0 = time.perf_counter()
        queue_ms = (t0 - job.enqueued) * 1e3
        deadline = time.monotonic() + job.timeout_s
        attempts = 0
        while True:
            attempts += 1
            try:
                w.send(job.payload)
                reply, _ = w.recv(deadline)
            except TimeoutError:  # the worker is killed; the pool replaces it
                self._count("timeouts")
                return JobResult("timeout", None, _ms(t0), queue_ms, attempts)
            except WorkerDied:
                reply = None
            if reply is not None:
                w.jobs += 1
                self._count("jobs")
                return JobResult("ok", reply, _ms(t0), queue_ms, attempts)
            self._count("crashes")
            if attempts >= 2 or time.monotonic() >= deadline or self.closed:
                return JobResult("crash", None, _ms(t0), queue_ms, attempts)
            self._workers.restart(w)

    # ---- the zygote (called by the workers, on the pool's spawner thread) ---------------
    def _fork_worker(self) -> tuple[int, socket.socket]:
        """A new worker from the zygote, replacing a dead zygote once. Raises ``WorkerDied``."""
        for attempt in range(2):
            z = self._zygote
            try:
                if self.closed:
                    raise InfraError("the math verifier pool is shut down")
                if z is None:
                    raise OSError("no zygote")
                return z.spawn(self.test_hooks, self.memory_mb)
            except (OSError, ValueError, KeyError, InfraError) as e:
                if attempt == 1 or self.closed or isinstance(e, InfraError):
                    raise WorkerDied(f"cannot start a math verifier worker: {e}") from e
            try:
                self._restart_zygote(z)
            except InfraError as e:  # the new zygote did not start
                raise WorkerDied(f"cannot start a math verifier worker: {e}") from e
        raise AssertionError("unreachable")

    def _restart_zygote(self, dead: Zygote | None) -> None:
        with self._lock:
            if self.closed or self._zygote is not dead:
                return  # already replaced
            if dead is not None:
                dead.close()
            self._zygote = Zygote()

    def _reap(self, dead: list[int]) -> None:
        z = self._zygote
        while dead:
            pid = dead.pop()
            if z is not None:
                z.reap(pid)

    def _count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def _kill(pid: int | None) -> None:
    if pid is None:
        return
    # safe: the zygote reaps a worker only when asked, so the pid is still ours
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# ---- forks ------------------------------------------------------------------------------
# Pools are owned by a run (``gymforge.verify.services.RunServices.math_pool``); this set only
# lets a forked child detach every pool it inherited.
_all_pools: weakref.WeakSet[MathPool] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A forked child gets its own pools on first use (``RunServices.math_pool`` replaces a
    detached one); it must not hold the parent's sockets open (the zygote would outlive the
    parent) nor shut the parent's pools down."""
    for pool in list(_all_pools):
        pool._detach()


os.register_at_fork(after_in_child=_after_fork_in_child)
