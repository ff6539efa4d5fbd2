"""One job child as the zygote sees it: fork, pipes, output caps, wall-clock kill, reaping.
Standard library only (runs inside the sandbox).

The zygote, never the child, enforces the wall clock: ``pump`` waits on the child's pipes and its
pidfd with a deadline and kills the child's process group when it passes. Output beyond
``output_bytes`` per stream is dropped and the job is killed (an output flood costs at most one
cap). Control frames are bounded by ``max_ctl_frame`` so a forged giant frame is refused before
it is buffered. With ``files_cap`` set (the job directory is a filesystem of its own), the
inodes in use there are read every ``FS_CHECK_S`` and the job is killed past the cap: Linux has
no rlimit for a file count, and wiping 100k files would cost the zygote seconds after the job.
``ipc_cap`` does the same for System V IPC objects (in a worker's own IPC namespace).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# The sandbox runs these files with their own directory on sys.path (sibling imports by
# bare name); the type checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import child, jail, wire
else:
    import child
    import jail
    import wire

_READ = select.POLLIN | select.POLLHUP | select.POLLERR
FS_CHECK_S = 0.005


class Sink:
    """Captured stdout/stderr with a per-stream cap, shared by every child of one job."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated: set[str] = set()

    def add(self, name: str, data: bytes) -> bool:
        """Keep what fits; return True when the cap was exceeded."""
        buf = self.buf[name]
        room = self.cap - len(buf)
        buf += data[: max(room, 0)]
        if len(data) > room:
            self.truncated.add(name)
            return True
        return False


class JobProc:
    """A forked job child. ``start`` forks; ``pump`` serves its pipes; ``finish`` reaps it."""

    def __init__(self, jobdir: str) -> None:
        self.jobdir = jobdir
        self.trusted = True  # until "started" (python) or the exec closes the control fd
        self.sink = Sink(0)
        self.on_ctl: Callable[[JobProc, dict[str, Any], list[bytes]], None] = lambda p, h, b: None
        self.ctl_reader = wire.FrameReader(max_frame=1 << 16)
        self._pending = {"stdin": bytearray(), "cmd": bytearray()}
        self.pid = 0
        self.exited = False
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.rusage: Any = None
        self.kill_reason: str | None = None
        self.setup_error: str | None = None
        self.violation: str | None = None
        self.exception: dict[str, Any] | None = None
        self.t0 = self.t1 = 0.0
        self.ctl_budget: int | None = None  # total control bytes allowed (None: no cap)
        self.watch_ctl = True
        self.fds: dict[str, int] = {}
        self.byfd: dict[int, str] = {}
        self.poll = select.poll()
        self.pidfd: int | None = None
        self.files_cap: int | None = None  # inodes the job directory may use (None: unchecked)
        self.ipc_cap: int | None = None  # System V IPC objects the job may hold
        self._fs_next = 0.0
        # Called once every job process is dead: may blame the job for damage it did
        # (the zygote's check of its fork template), by setting ``violation``/``kill_reason``.
        self.guard: Callable[[JobProc], None] | None = None

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def prefork(cls, jobdir: str, spawn: Callable[[dict[str, int]], int] | None = None) -> JobProc:
        """Start a child that does the job-independent set-up and then waits for a job.
        ``spawn`` (the fork template's) forks it elsewhere from the five pipe ends and returns
        its pid; without it (tests, tools) this process forks it."""
        self = cls(jobdir)
        pipes = {name: os.pipe() for name in ("stdin", "stdout", "stderr", "ctl", "cmd")}
        mine = {"stdin": 1, "stdout": 0, "stderr": 0, "ctl": 0, "cmd": 1}
        child_fds = {n: p[1 - mine[n]] for n, p in pipes.items()}
        self.t0 = time.monotonic()
        if spawn is not None:
            try:
                pid = spawn(child_fds)
            except BaseException:
                for p in pipes.values():
                    os.close(p[0])
                    os.close(p[1])
                raise
        else:
            if sys.__stderr__ is not None:
                sys.__stderr__.flush()  # nothing of ours may reach a job's stderr
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child never returns
                try:
                    for n, p in pipes.items():
                        os.close(p[mine[n]])
                    child.main(child_fds, jobdir)
                finally:
                    os._exit(127)
        self.pid = pid
        self.fds = {n: p[mine[n]] for n, p in pipes.items()}
        for n, p in pipes.items():
            os.close(p[1 - mine[n]])
            os.set_blocking(self.fds[n], False)
        self.byfd = {fd: n for n, fd in self.fds.items()}
        for n in ("stdout", "stderr", "ctl"):
            self.poll.register(self.fds[n], _READ)
        try:
            self.pidfd = os.pidfd_open(pid)
            self.poll.register(self.pidfd, select.POLLIN)
        except OSError:
            self.pidfd = None
        return self

    def usable(self) -> bool:
        """A pre-forked child that is still alive and waiting."""
        self._try_reap()
        return not self.exited and self.kill_reason is None and "cmd" in self.fds

    def dispatch(
        self,
        job: dict[str, Any],
        source: bytes,
        stdin: bytes,
        sink: Sink,
        max_ctl_frame: int,
        on_ctl: Callable[[JobProc, dict[str, Any], list[bytes]], None],
        extra: list[bytes] | tuple[bytes, ...] = (),
        watch_ctl: bool = True,
    ) -> None:
        """Hand the waiting child its job; the wall clock starts now. Without ``watch_ctl``
        the control pipe is read only when the job ends (one wake-up less per job; for jobs
        whose control frames nobody waits for: programs, whose frames are few)."""
        if not watch_ctl:
            self.poll.unregister(self.fds["ctl"])
            self.watch_ctl = False
        self.sink, self.on_ctl = sink, on_ctl
        self.ctl_reader = wire.FrameReader(max_frame=max_ctl_frame)
        self.t0 = time.monotonic()
        self._fs_next = self.t0 + FS_CHECK_S  # a job that ends sooner is never checked
        self._pending["stdin"] += stdin
        self.send_cmd({"op": "job", "job": job}, [source, *extra])
        if not self._pending["stdin"]:
            self._close("stdin")

    def send_cmd(self, header: dict[str, Any], blobs: list[bytes] | tuple[bytes, ...] = ()) -> None:
        if "cmd" in self.fds:
            self._pending["cmd"] += wire.pack_frame(header, blobs)
            self._sync_writers()

    def pump(self, deadline: float, stop: Callable[[], bool] = lambda: False) -> str:
        """Serve pipes until ``stop()``, the child's exit (``"exit"``), a kill by the zygote
        (``"killed"``) or ``deadline`` (``"deadline"``; the caller decides what to kill)."""
        while True:
            if stop():
                return "stop"
            if self.kill_reason is not None:
                return "killed"
            if self.exited:
                return "exit"
            left = deadline - time.monotonic()
            if left <= 0:
                return "deadline"
            wait_ms = left * 1000 if self.pidfd is not None else min(left * 1000, 20)
            if self.files_cap is not None or self.ipc_cap is not None:
                wait_ms = min(wait_ms, FS_CHECK_S * 1000)
            for fd, ev in self.poll.poll(max(1, int(wait_ms + 0.999))):
                self._event(fd, ev)
            if self.pidfd is None:
                self._try_reap()
            if self.files_cap is not None or self.ipc_cap is not None:
                self._check_counts()

    def _check_counts(self) -> None:
        """Kill the job once it holds more files or IPC objects than allowed (every
        ``FS_CHECK_S``): what the zygote's clean-up will have to remove stays bounded."""
        now = time.monotonic()
        if now < self._fs_next:
            return
        self._fs_next = now + FS_CHECK_S
        if self.files_cap is not None:
            st = os.statvfs(self.jobdir)
            if st.f_files - st.f_ffree > self.files_cap + 1:  # + the directory itself
                self.violation = f"more than {self.files_cap} files in the job directory"
                self.kill("files")
        if self.ipc_cap is not None and jail.ipc_objects() > self.ipc_cap:
            self.violation = f"more than {self.ipc_cap} System V IPC objects"
            self.kill("ipc")

    def kill(self, reason: str) -> None:
        """SIGKILL the child's process group (and the child itself, in case setsid had not
        run yet). The first reason sticks."""
        if self.kill_reason is None and not self.exited:
            self.kill_reason = reason
        for target in (-self.pid, self.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(target, signal.SIGKILL)

    def finish(self, kill_rest: Callable[[], int]) -> int:
        """Kill what is left (``kill_rest`` sweeps every other job process and returns how many
        it found), reap the child, drain the pipes to EOF. Returns the stray count."""
        if not self.exited:
            self.kill(self.kill_reason or "finished")
            _, status, ru = os.wait4(self.pid, 0)
            self._exited(status, ru)
        strays = kill_rest()
        if self.guard is not None:
            self.guard(self)
        if "ctl" in self.fds and not self.watch_ctl:
            self.poll.register(self.fds["ctl"], _READ)
            self.watch_ctl = True
        end = time.monotonic() + 1.0
        while any(n in self.fds for n in ("stdout", "stderr", "ctl")) and time.monotonic() < end:
            for fd, ev in self.poll.poll(50):
                self._event(fd, ev)
        for n in list(self.fds):
            self._close(n)
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        return strays

    @property
    def wall(self) -> float:
        return (self.t1 or time.monotonic()) - self.t0

    def facts(self) -> dict[str, Any]:
        ru = self.rusage
        return {
            "exit_code": self.exit_code,
            "signal": self.signal,
            "wall_time": round(self.wall, 6),
            "cpu_time": round(ru.ru_utime + ru.ru_stime, 6) if ru else None,
            "max_rss_bytes": ru.ru_maxrss * 1024 if ru else None,
            "kill_reason": self.kill_reason,
            "violation": self.violation,
            "exception": self.exception,
        }

    # ------------------------------------------------------------------ internals
    def _event(self, fd: int, ev: int) -> None:
        if fd == self.pidfd:
            self._try_reap()
            return
        name = self.byfd.get(fd)
        if name is None:
            return
        if name in ("stdin", "cmd"):
            if ev & (select.POLLERR | select.POLLHUP):
                self._close(name)
            else:
                self._flush(name)
            return
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            self._close(name)
            if name == "ctl":
                self.trusted = False
            return
        if name == "ctl":
            self._ctl(data)
        elif self.sink.add(name, data):
            self.kill("output")

    def _ctl(self, data: bytes) -> None:
        if self.ctl_budget is not None:
            self.ctl_budget -= len(data)
            if self.ctl_budget < 0:
                self.violation = "too much data on the control channel"
                self.kill("protocol")
                return
        try:
            frames = self.ctl_reader.feed(data)
        except wire.FrameError:
            frames = []
        self._frames(frames)
        if self.ctl_reader.error is not None and self.kill_reason is None:
            self.violation = f"control channel: {self.ctl_reader.error}"
            self.kill("protocol")

    def _frames(self, frames: list[tuple[dict[str, Any], list[bytes]]]) -> None:
        for hdr, blobs in frames:
            ev = hdr.get("ev")
            if ev == "started" and self.trusted:
                self.trusted = False
            elif ev == "setup_error":
                if self.trusted:
                    self.setup_error = str(hdr.get("msg"))[:2000]
            elif ev == "exception" and not self.trusted:
                self.exception = wire.flat(hdr, ("etype", "errno"))
            else:
                self.on_ctl(self, hdr, blobs)

    def _flush(self, name: str) -> None:
        buf = self._pending[name]
        try:
            while buf:
                n = os.write(self.fds[name], buf[: 1 << 16])
                del buf[:n]
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno not in (errno.EPIPE, errno.EBADF):
                raise
            self._close(name)
            return
        self._sync_writers()
        if name == "stdin" and not buf:
            self._close("stdin")

    def _sync_writers(self) -> None:
        for name in ("stdin", "cmd"):
            fd = self.fds.get(name)
            if fd is None:
                continue
            try:
                if self._pending[name]:
                    self.poll.register(fd, select.POLLOUT | select.POLLERR | select.POLLHUP)
                else:
                    self.poll.unregister(fd)
            except KeyError:
                pass

    def _close(self, name: str) -> None:
        fd = self.fds.pop(name, None)
        if fd is None:
            return
        with contextlib.suppress(KeyError):
            self.poll.unregister(fd)
        os.close(fd)

    def _try_reap(self) -> None:
        if self.exited:
            return
        try:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.exited = True
            return
        if pid:
            self._exited(status, ru)

    def _exited(self, status: int, ru: Any) -> None:
        self.exited, self.t1, self.rusage = True, time.monotonic(), ru
        if os.WIFSIGNALED(status):
            self.signal = os.WTERMSIG(status)
        else:
            self.exit_code = os.WEXITSTATUS(status)
        if self.pidfd is not None:
            with contextlib.suppress(KeyError):
                self.poll.unregister(self.pidfd)
