"""Pre-forked worker processes behind ``wire`` frames: the one plumbing of every worker pool.

The sandbox (one bubblewrap jail + zygote per worker) and the math verifier (workers forked
from a sympy-warmed zygote, no jail) differ in how a worker is launched and isolated; how the
host talks to it, bounds its time, notices its death, replaces it and shuts it down is this
module, for both:

- **Framing**: ``wire`` frames (a JSON header and raw blobs) on a write fd and a read fd,
  which may be one socket. JSON, never pickle: the host decodes only plain data.
- **Spawn**: ``FramedWorker.start`` runs the subclass's ``_launch`` and waits, bounded by
  ``ready_timeout``, for the worker's first frame, which must say ``{"ev": "ready"}``.
- **Deadlines**: every ``recv`` has one. When it passes, or the stream breaks or carries
  garbage, the worker is killed (``_terminate``) at once and must be started again: a caller
  never hangs on a worker and never reuses one in an unknown state.
- **Health**: a worker is ``healthy`` when it is running and its stream is quiet; a worker that
  died (or spoke) while idle is replaced before a request is sent to it.
- **Back-pressure and respawn**: ``WorkerPool.acquire`` hands out one idle worker at a time
  (callers wait, in bounded steps, while all are busy), restarts a dead one before handing it
  out and, on release, restarts a killed one on the pool's spawner thread before it becomes
  idle again. Every start runs on that one long-lived thread, because a ``PR_SET_PDEATHSIG``
  set up by a launcher fires when the *thread* that forked it exits.
- **Shutdown**: ``WorkerPool.close`` stops idle workers, interrupts busy ones (their holder
  sees the stream end and gets ``WorkerDied``) and kills them on release.
"""

from __future__ import annotations

import collections
import contextlib
import queue
import select
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from gymforge.core.errors import InfraError
from gymforge.sandbox import wire

_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR


class WorkerDied(InfraError):
    """The worker went away (crashed, killed, its stream broke) or never became ready."""


class FramedWorker:
    """One worker process spoken to in ``wire`` frames. Used by one thread at a time.

    Subclasses implement ``_launch`` (start the process, return ``(write_fd, read_fd)``) and
    ``_terminate`` (SIGKILL it, release its fds; idempotent), and may override ``_running``
    (a cheap liveness check), ``_on_ready`` (read the ready frame), ``interrupt`` (kill the
    process without touching fds another thread may be reading) and ``failure_detail``.
    """

    label = "worker"

    def __init__(self, index: int, ready_timeout: float = 60.0, max_frame: int = wire.MAX_FRAME):
        self.index = index
        self.ready_timeout = ready_timeout
        self.max_frame = max_frame
        self.broken = True
        self.starts = 0
        self.wfd = self.rfd = -1
        self.stream: wire.FrameStream | None = None
        self._poll = select.poll()

    # ------------------------------------------------------------------ subclass hooks
    def _launch(self) -> tuple[int, int]:
        raise NotImplementedError

    def _terminate(self) -> None:
        raise NotImplementedError

    def _running(self) -> bool:
        return True

    def _on_ready(self, header: dict[str, Any]) -> None:
        """Called with the ready frame once the worker is up."""

    def interrupt(self) -> None:
        """Kill the worker's process only (another thread may be reading its stream)."""

    def failure_detail(self) -> str:
        """Text appended to a ``WorkerDied`` message (e.g. the tail of the worker's log)."""
        return ""

    # ------------------------------------------------------------------ lifecycle
    @property
    def name(self) -> str:
        return f"{self.label} {self.index}"

    def start(self) -> None:
        """Launch the worker and wait for its ready frame. Raises ``WorkerDied``."""
        self.kill()
        try:
            self.wfd, self.rfd = self._launch()
        except (OSError, ValueError, KeyError) as e:
            self.kill()
            raise WorkerDied(f"{self.name} did not start: {e}") from None
        except BaseException:
            self.kill()
            raise
        self.stream = wire.FrameStream(self.rfd, self.max_frame)
        self._poll = select.poll()
        self._poll.register(self.rfd, _READABLE)
        self.broken = False
        try:
            hdr, _ = self.recv(time.monotonic() + self.ready_timeout)
        except (TimeoutError, WorkerDied) as e:
            self.kill()
            raise WorkerDied(f"{self.name} did not start: {e}; {self.failure_detail()}") from None
        if hdr.get("ev") != "ready":
            self.kill()
            raise WorkerDied(f"{self.name}: unexpected first frame {hdr}")
        self.starts += 1
        self._on_ready(hdr)

    def kill(self) -> None:
        """SIGKILL the worker and release it (idempotent); ``start`` makes it usable again."""
        self.broken = True
        self.stream = None
        self._terminate()

    def stop(self, grace: float = 2.0) -> None:
        """End the worker; subclasses may first ask it to exit cleanly."""
        self.kill()

    @property
    def alive(self) -> bool:
        return not self.broken and self._running()

    def healthy(self) -> bool:
        """Alive and quiet: an idle worker has nothing to say, so a readable stream means it
        died (end of stream) or misbehaved; either way it must not be given a request."""
        if not self.alive or self.stream is None:
            return False
        if self.stream.ready or self.stream.reader.pending:
            return False  # it said more than it was asked: already read, not yet taken
        return not self._poll.poll(0)

    # ------------------------------------------------------------------ protocol
    def send(self, header: dict[str, Any], blobs: Sequence[bytes] = ()) -> None:
        if self.broken:
            raise WorkerDied(f"{self.name} is not running")
        try:
            wire.write_all(self.wfd, wire.pack_frame(header, tuple(blobs)))
        except OSError as e:
            self.kill()
            raise WorkerDied(f"{self.name}: {e}") from None

    def recv(self, deadline: float) -> tuple[dict[str, Any], list[bytes]]:
        """One frame by ``deadline`` (``time.monotonic()``), or ``TimeoutError`` (the worker
        is then killed) or ``WorkerDied``."""
        stream = self.stream
        if self.broken or stream is None:
            raise WorkerDied(f"{self.name} is not running")
        try:
            return stream.recv(deadline)
        except TimeoutError:
            self.kill()
            raise
        except (wire.FrameError, OSError) as e:
            self.kill()
            raise WorkerDied(f"{self.name} died: {e}; {self.failure_detail()}") from None

    def request(
        self, header: dict[str, Any], blobs: Sequence[bytes], timeout: float
    ) -> tuple[dict[str, Any], list[bytes]]:
        self.send(header, blobs)
        return self.recv(time.monotonic() + timeout)


W = TypeVar("W", bound=FramedWorker)


class WorkerPool(Generic[W]):
    """Exclusive, bounded use of a fixed set of workers (see the module docstring). ``name``
    ("sandbox backend", "math verifier") appears in errors and in the spawner thread's name;
    ``wait_step_s`` is how often a waiting ``acquire`` checks that the pool is still open.

    Which idle worker is handed out is the one policy users choose: the one idle longest
    (default), when a worker has housekeeping to do after each request (the sandbox's zygote
    wipes the job and pre-forks the next child: round robin hides that), or with ``lifo`` the
    one used last, when it has none (its caches are warm: ~25 us per math verifier job)."""

    def __init__(
        self, workers: Sequence[W], name: str, *, lifo: bool = False, wait_step_s: float = 0.5
    ) -> None:
        self.workers = list(workers)
        self.name = name
        self.lifo = lifo
        self.wait_step_s = wait_step_s
        self.closed = False
        # Idle workers; ``_tokens`` counts them, so waiting for one is C-fast.
        self._idle: collections.deque[W] = collections.deque()
        self._tokens: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._busy: set[int] = set()
        self._lock = threading.Lock()
        prefix = f"gymforge-{name.replace(' ', '-')}-spawn"
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix=prefix)

    def start(self, strict: bool = True) -> None:
        """Start every worker (on the spawner thread) and make it idle. ``strict``: the first
        failure closes the pool and is raised; otherwise a worker that failed to start is
        started again when it is first acquired."""
        if self.closed:
            raise InfraError(f"the {self.name} pool is closed")
        futures = [self._spawner.submit(w.start) for w in self.workers]
        try:
            for fut in futures:
                try:
                    fut.result()
                except WorkerDied:
                    if strict:
                        raise
        except BaseException:
            self.close()
            raise
        for w in self.workers:
            self._release(w)

    def restart(self, w: W) -> None:
        """Start ``w`` again now (on the spawner thread), for a caller that holds it."""
        if self.closed:
            raise InfraError(f"the {self.name} pool is closed")
        self._spawner.submit(w.start).result()

    @contextlib.contextmanager
    def acquire(self) -> Iterator[W]:
        """Exclusive use of one live worker (started again first if it died while idle)."""
        while True:
            if self.closed:
                raise InfraError(f"the {self.name} pool is closed")
            try:
                self._tokens.get(timeout=self.wait_step_s)
            except queue.Empty:
                continue
            # (a token is taken only when a worker is there)
            w = self._idle.pop() if self.lifo else self._idle.popleft()
            break
        with self._lock:
            self._busy.add(id(w))
        try:
            if not w.healthy():
                if w.alive:
                    w.kill()
                self.restart(w)
            yield w
        finally:
            with self._lock:
                self._busy.discard(id(w))
                closed = self.closed
            if closed:
                w.kill()
            elif not w.alive:
                try:
                    self._spawner.submit(self._restart_then_release, w)
                except RuntimeError:  # the spawner was shut down by a concurrent close
                    w.kill()
            else:
                self._release(w)

    def _release(self, w: W) -> None:
        self._idle.append(w)
        self._tokens.put(None)

    def _restart_then_release(self, w: W) -> None:
        if self.closed:
            return
        with contextlib.suppress(Exception):
            w.start()
        self._release(w)

    def close(self, grace: float = 2.0) -> None:
        """Stop idle workers, interrupt busy ones (killed on release). Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            busy = [w for w in self.workers if id(w) in self._busy]
        for w in busy:
            w.interrupt()
        idle = [w for w in self.workers if w not in busy]
        for w in idle:
            w.stop(grace)
        # Only now: a worker whose launcher set PR_SET_PDEATHSIG dies with the spawner thread.
        self._spawner.shutdown(wait=True, cancel_futures=True)
        for w in idle:
            w.kill()  # in case a restart was under way
