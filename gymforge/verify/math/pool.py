"""A pre-forked worker pool with hard, external per-job timeouts (parent side).

Why processes and an external kill: sympy can hang in C-level big-integer arithmetic or in
``str()`` of a huge object, where no signal handler runs, and ``signal.alarm`` only works in
the main thread anyway. So each job runs in a worker process, and a job that overruns its
deadline gets its worker SIGKILLed and replaced.

- Workers are forks of a *zygote* (see ``worker``), a clean interpreter started once with
  sympy imported; a respawn is a fork, a few milliseconds.
- One driver thread per worker takes jobs from a shared queue, sends one job at a time over
  the worker's socket and waits for the reply with the job's deadline as socket timeout.
  ``submit`` returns a ``concurrent.futures.Future``; ``run`` blocks on it and ``arun``
  awaits it without blocking the event loop. Any number of threads and coroutines may
  submit concurrently.
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
import json
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gymforge.core.errors import InfraError
from gymforge.verify.math.wire import recv_msg, send_msg

_ZYGOTE_CODE = (
    "import sys; from gymforge.verify.math.worker import zygote_main; zygote_main(int(sys.argv[1]))"
)


@dataclass(frozen=True)
class JobResult:
    """``value`` is the worker's reply when ``status == "ok"``."""

    status: Literal["ok", "timeout", "crash"]
    value: dict[str, Any] | None
    latency_ms: float
    queue_ms: float
    attempts: int = 1


class _Zygote:
    def __init__(self, start_timeout_s: float = 120.0) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = str(Path(__file__).resolve().parents[3])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE_CODE, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        ours.settimeout(start_timeout_s)
        try:
            hello = ours.recv(4096)
        except OSError as e:
            self.close()
            raise InfraError(f"math verifier zygote did not start: {e}") from e
        if not hello:
            self.close()
            raise InfraError("math verifier zygote exited at start-up (see its stderr)")
        ours.settimeout(5.0)  # a zygote that takes longer to answer is replaced
        self.pid = int(json.loads(hello)["pid"])

    def _call(self, req: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        with self.lock:
            data = json.dumps(req).encode()
            if fds:
                socket.send_fds(self.sock, [data], list(fds))
            else:
                self.sock.send(data)
            reply = self.sock.recv(4096)
        if not reply:
            raise OSError("zygote closed its control socket")
        out: dict[str, Any] = json.loads(reply)
        return out

    def spawn(self, hooks: bool, memory_mb: int) -> tuple[int, socket.socket]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            reply = self._call(
                {"cmd": "spawn", "hooks": hooks, "memory_mb": memory_mb}, (theirs.fileno(),)
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return int(reply["pid"]), ours

    def reap(self, pid: int) -> None:
        with contextlib.suppress(OSError):  # the zygote is gone; its workers died with it
            self._call({"cmd": "reap", "pid": pid})

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._call({"cmd": "exit"})
        self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class _Slot:
    def __init__(self) -> None:
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.jobs = 0
        self.dead: list[int] = []  # killed, not yet reaped


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
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._slots = [_Slot() for _ in range(self.size)]
        self._threads: list[threading.Thread] = []
        self._zygote: _Zygote | None = None
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
            self._zygote = _Zygote()
            self._started = True
            atexit.register(self.shutdown)
            for i, slot in enumerate(self._slots):
                t = threading.Thread(target=self._drive, args=(slot,), daemon=True,
                                     name=f"gymforge-math-{i}")  # fmt: skip
                t.start()
                self._threads.append(t)
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
            self.closed = True
            started = self._started
        atexit.unregister(self.shutdown)
        if not started:
            return
        for _ in self._threads:
            self._jobs.put(None)
        for slot in self._slots:
            self._kill(slot.pid)
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
        self.closed = True
        socks = [s.sock for s in self._slots] + [self._zygote.sock if self._zygote else None]
        for sock in socks:
            if sock is not None:
                sock.close()

    def pids(self) -> dict[str, Any]:
        """``{"zygote": pid, "workers": [pid, ...]}`` of the live processes (for tests)."""
        z = self._zygote.pid if self._zygote else None
        return {"zygote": z, "workers": [s.pid for s in self._slots if s.pid is not None]}

    # ---- submitting ---------------------------------------------------------------------
    def submit(self, payload: dict[str, Any], timeout_s: float = 1.0) -> Future[JobResult]:
        """Queue one job; the future resolves to a ``JobResult``."""
        if not self._started:
            self.start()
        self._check_usable()
        fut: Future[JobResult] = Future()
        self._jobs.put(_Job(payload, timeout_s, fut, time.perf_counter()))
        return fut

    def run(self, payload: dict[str, Any], timeout_s: float = 1.0) -> JobResult:
        return self.submit(payload, timeout_s).result()

    async def arun(self, payload: dict[str, Any], timeout_s: float = 1.0) -> JobResult:
        if not self._started:  # starting takes a second: never on the event loop
            await asyncio.to_thread(self.start)
        return await asyncio.wrap_future(self.submit(payload, timeout_s))

    # ---- driver threads -----------------------------------------------------------------
    def _drive(self, slot: _Slot) -> None:
        with contextlib.suppress(InfraError):  # eagerly, so the first jobs need not wait
            self._spawn(slot)  # (on failure, retried when a job arrives)
        while True:
            job = self._jobs.get()
            if job is None:
                break
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                result = self._run(slot, job)
            except BaseException as e:
                job.future.set_exception(e if isinstance(e, InfraError) else InfraError(str(e)))
                continue
            job.future.set_result(result)
            # housekeeping after the verdict is out, so it never adds to a job's latency
            if slot.sock is not None and slot.jobs >= self.max_jobs_per_worker:
                self._discard(slot)
            self._reap(slot)
            if slot.sock is None and not self.closed:
                with contextlib.suppress(InfraError):
                    self._spawn(slot)  # before the next job, so it waits in the queue instead
        self._discard(slot)
        self._reap(slot)

    def _run(self, slot: _Slot, job: _Job) -> JobResult:
        self._ensure_worker(slot)
        t0 = time.perf_counter()
        queue_ms = (t0 - job.enqueued) * 1e3
        deadline = t0 + job.timeout_s
        attempts = 0
        while True:
            attempts += 1
            sock = slot.sock
            assert sock is not None
            try:
                sock.settimeout(max(deadline - time.perf_counter(), 0.001))
                send_msg(sock, job.payload)
                sock.settimeout(max(deadline - time.perf_counter(), 0.001))
                reply = recv_msg(sock)
            except TimeoutError:
                self._count("timeouts")
                self._discard(slot)
                return JobResult("timeout", None, _ms(t0), queue_ms, attempts)
            except OSError:
                reply = None
            if reply is not None:
                slot.jobs += 1
                self._count("jobs")
                return JobResult("ok", reply, _ms(t0), queue_ms, attempts)
            self._count("crashes")
            self._discard(slot)
            if attempts >= 2 or time.perf_counter() >= deadline or self.closed:
                return JobResult("crash", None, _ms(t0), queue_ms, attempts)
            self._ensure_worker(slot)

    def _ensure_worker(self, slot: _Slot) -> None:
        if slot.sock is not None and _dead_or_dirty(slot.sock):
            self._discard(slot)  # died while idle: replace it before sending anything
        if slot.sock is None:
            self._spawn(slot)

    def _spawn(self, slot: _Slot) -> None:
        if self.closed:
            raise InfraError("the math verifier pool is shut down")
        self._reap(slot)
        for attempt in range(2):
            z = self._zygote
            try:
                if z is None:
                    raise OSError("no zygote")
                slot.pid, slot.sock = z.spawn(self.test_hooks, self.memory_mb)
                slot.jobs = 0
                self._count("respawns")
                return
            except (OSError, ValueError, KeyError) as e:
                if attempt == 1 or self.closed:
                    raise InfraError(f"cannot start a math verifier worker: {e}") from e
                self._restart_zygote(z)

    def _restart_zygote(self, dead: _Zygote | None) -> None:
        with self._lock:
            if self.closed or self._zygote is not dead:
                return  # another driver already replaced it
            if dead is not None:
                dead.close()
            self._zygote = _Zygote()

    def _kill(self, pid: int | None) -> None:
        if pid is None:
            return
        # safe: the zygote reaps a worker only when asked, so the pid is still ours
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def _discard(self, slot: _Slot) -> None:
        """Kill the slot's worker now; the zygote reaps it later (``_reap``)."""
        pid, sock = slot.pid, slot.sock
        slot.pid, slot.sock = None, None
        self._kill(pid)
        if sock is not None:
            sock.close()
        if pid is not None:
            slot.dead.append(pid)

    def _reap(self, slot: _Slot) -> None:
        z = self._zygote
        while slot.dead:
            pid = slot.dead.pop()
            if z is not None:
                z.reap(pid)

    def _count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def _dead_or_dirty(sock: socket.socket) -> bool:
    p = select.poll()
    p.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(p.poll(0))


# ---- the process-wide default pool ------------------------------------------------------
_default: MathPool | None = None
_all_pools: weakref.WeakSet[MathPool] = weakref.WeakSet()
_default_lock = threading.Lock()
_default_workers: int | None = None


def configure_default_pool(workers: int | None = None) -> None:
    """Set the default pool's size (else ``$GYMFORGE_MATH_WORKERS``, else min(2, cpus)).
    A default pool already running is shut down and recreated on next use."""
    global _default, _default_workers
    with _default_lock:
        _default_workers = workers
        old, _default = _default, None
    if old is not None:
        old.shutdown()


def default_pool() -> MathPool:
    """The process-wide pool, created on first use and shut down at exit."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            env = os.environ.get("GYMFORGE_MATH_WORKERS")
            workers = _default_workers or (int(env) if env else None)
            _default = MathPool(workers)
        return _default


def _after_fork_in_child() -> None:
    """A forked child gets its own default pool on first use; it must not hold the parent's
    sockets open (the zygote would outlive the parent) nor shut the parent's pools down."""
    global _default, _default_lock
    _default, _default_lock = None, threading.Lock()
    for pool in list(_all_pools):
        pool._detach()


os.register_at_fork(after_in_child=_after_fork_in_child)
