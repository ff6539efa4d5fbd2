"""The host's handle on one zygote: its process, its two pipes and the frame protocol.

A ``Worker`` is used by one thread at a time (the backend's pool guarantees it). Every read
has a deadline; when it passes, or the pipe breaks, the worker is killed from the host (its
whole process group; bubblewrap's ``--die-with-parent`` and the pid namespace take everything
inside down with it) and must be restarted before further use. A worker therefore never
hangs its caller.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from typing import Any

from gymforge.core.errors import InfraError
from gymforge.sandbox import wire
from gymforge.sandbox.cgroups import WorkerCgroup
from gymforge.sandbox.launch import Runtime, SandboxPaths, trampoline


class WorkerDied(InfraError):
    """The zygote went away (crashed, killed, or its pipe broke)."""


class Worker:
    def __init__(
        self,
        index: int,
        launcher: Any,
        runtime: Runtime,
        cgroups: bool = True,
        ready_timeout: float = 60.0,
    ) -> None:
        self.index = index
        self.launcher = launcher
        self.runtime = runtime
        self.ready_timeout = ready_timeout
        self.paths: SandboxPaths = launcher.paths(runtime, index)
        self.host_dir = runtime.worker_dir(index)
        self.cgroup: WorkerCgroup | None = None
        if cgroups and launcher.name != "docker":
            self.cgroup = WorkerCgroup(f"{runtime.root.name}-w{index}")
            if not self.cgroup.available:
                self.cgroup = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.info: dict[str, Any] = {}
        self.broken = True
        self.starts = 0
        self.pids_base = 0
        self.last_counters: tuple[int, int] | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Launch the zygote and wait for its ``ready`` frame. Raises ``WorkerDied``."""
        self.kill()
        procs = self.cgroup.procs_files if self.cgroup else []
        root = os.getuid() == 0
        cmd = trampoline(procs, -500 if root else None)
        cmd += self.launcher.command(self.runtime, self.index)
        log = open(self.host_dir / "zygote.log", "ab")  # noqa: SIM115 - owned by the Popen
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )
        finally:
            log.close()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.stream = wire.FrameStream(self.rfd)
        self.broken = False
        try:
            hdr, _ = self.recv(time.monotonic() + self.ready_timeout)
        except (TimeoutError, WorkerDied) as e:
            self.kill()
            raise WorkerDied(f"worker {self.index} did not start: {e}; {self.log_tail()}") from None
        if hdr.get("ev") != "ready":
            self.kill()
            raise WorkerDied(f"worker {self.index}: unexpected first frame {hdr}")
        self.info = hdr
        self.starts += 1
        self.last_counters = None
        if self.cgroup and "pids" in self.cgroup.dirs:
            try:
                current = self.cgroup.dirs["pids"][1] / "pids.current"
                self.pids_base = int(current.read_text())
            except (OSError, ValueError):
                self.pids_base = 4

    def log_tail(self, n: int = 800) -> str:
        try:
            data = (self.host_dir / "zygote.log").read_bytes()[-n:]
        except OSError:
            return ""
        return "log: " + data.decode("utf-8", "replace").strip()

    @property
    def alive(self) -> bool:
        return not self.broken and self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker's process group and reap it (idempotent)."""
        self.broken = True
        p, self.proc = self.proc, None
        if p is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=10)
        hook = getattr(self.launcher, "on_kill", None)
        if hook is not None:
            with contextlib.suppress(Exception):
                hook(self.runtime, self.index)
        for f in (p.stdin, p.stdout):
            with contextlib.suppress(OSError):
                if f is not None:
                    f.close()

    def stop(self, grace: float = 2.0) -> None:
        """Ask the zygote to exit (it kills its jobs on the way out), then make sure."""
        p = self.proc
        if p is not None and not self.broken:
            with contextlib.suppress(OSError, WorkerDied):
                self.send({"op": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=grace)
        self.kill()

    def remove(self) -> None:
        self.kill()
        if self.cgroup is not None:
            self.cgroup.remove()

    # ------------------------------------------------------------------ protocol
    def send(self, header: dict[str, Any], blobs: list[bytes] | tuple[bytes, ...] = ()) -> None:
        if self.broken:
            raise WorkerDied(f"worker {self.index} is not running")
        try:
            wire.write_all(self.wfd, wire.pack_frame(header, blobs))
        except OSError as e:
            self.kill()
            raise WorkerDied(f"worker {self.index}: {e}") from None

    def recv(self, deadline: float) -> tuple[dict[str, Any], list[bytes]]:
        """One frame, or ``TimeoutError`` (the worker is then killed) or ``WorkerDied``."""
        if self.broken:
            raise WorkerDied(f"worker {self.index} is not running")
        try:
            return self.stream.recv(deadline)
        except TimeoutError:
            self.kill()
            raise
        except (wire.FrameError, OSError) as e:
            self.kill()
            raise WorkerDied(f"worker {self.index} died: {e}; {self.log_tail()}") from None

    def request(
        self, header: dict[str, Any], blobs: list[bytes], timeout: float
    ) -> tuple[dict[str, Any], list[bytes]]:
        self.send(header, blobs)
        return self.recv(time.monotonic() + timeout)

    # ------------------------------------------------------------------ cgroup facts
    def limit(self, memory: int | None, processes: int) -> None:
        if self.cgroup is None:
            return
        if memory is not None:
            self.cgroup.set_memory(memory)
        self.cgroup.set_pids(self.pids_base + processes)

    def counters(self) -> tuple[int, int]:
        """(OOM kills, failed forks) so far; the last reading is kept in ``last_counters``."""
        if self.cgroup is None:
            return (0, 0)
        self.last_counters = (self.cgroup.oom_kills(), self.cgroup.pids_max_events())
        return self.last_counters

    def counters_before(self) -> tuple[int, int]:
        """The counters before a job: nothing runs between jobs, so the last reading holds."""
        return self.last_counters if self.last_counters is not None else self.counters()

    @property
    def has_memory_cgroup(self) -> bool:
        return self.cgroup is not None and "memory" in self.cgroup.dirs

    @property
    def has_pids_cgroup(self) -> bool:
        return self.cgroup is not None and "pids" in self.cgroup.dirs
