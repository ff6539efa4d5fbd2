"""The host's handle on one sandbox worker: a zygote in its own jail (see ``launch``).

The plumbing (frames, deadlines, kill on timeout or a broken pipe, restart) is
``prefork.FramedWorker``, shared with the math verifier's workers; this class adds what is
the sandbox's own: launching the zygote through the launcher and its trampoline into the
worker's cgroups, killing its whole process group (bubblewrap's ``--die-with-parent`` and the
pid namespace take everything inside down with it), its log, and the cgroup limits and
counters read around each job. A worker therefore never hangs its caller.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any

from gymforge.sandbox.cgroups import WorkerCgroup
from gymforge.sandbox.launch import Runtime, SandboxPaths, trampoline
from gymforge.sandbox.prefork import FramedWorker, WorkerDied

__all__ = ["Worker", "WorkerDied"]


class Worker(FramedWorker):
    def __init__(
        self,
        index: int,
        launcher: Any,
        runtime: Runtime,
        cgroups: bool = True,
        ready_timeout: float = 60.0,
    ) -> None:
        super().__init__(index, ready_timeout)
        self.launcher = launcher
        self.runtime = runtime
        self.paths: SandboxPaths = launcher.paths(runtime, index)
        self.host_dir = runtime.worker_dir(index)
        self.cgroup: WorkerCgroup | None = None
        if cgroups and launcher.name != "docker":
            self.cgroup = WorkerCgroup(f"{runtime.root.name}-w{index}")
            if not self.cgroup.available:
                self.cgroup = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.info: dict[str, Any] = {}
        self.pids_base = 0
        self.last_counters: tuple[int, int] | None = None

    # ------------------------------------------------------------------ lifecycle
    def _launch(self) -> tuple[int, int]:
        """Launch the zygote (its ``ready`` frame is awaited by ``start``)."""
        procs = self.cgroup.procs_files if self.cgroup else []
        root = os.getuid() == 0
        cmd = trampoline(procs, -500 if root else None)
        cmd += self.launcher.command(self.runtime, self.index)
        log = open(self.host_dir / "zygote.log", "ab")  # noqa: SIM115 - owned by the Popen
        env_of = getattr(self.launcher, "env", None)  # a container engine's configuration
        try:
            self.proc = subprocess.Popen(
                cmd,
                env=env_of() if env_of is not None else None,
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
        return self.proc.stdin.fileno(), self.proc.stdout.fileno()

    def _on_ready(self, header: dict[str, Any]) -> None:
        self.info = header
        self.last_counters = None
        attach = getattr(self.launcher, "attach_cgroup", None)  # a container's own cgroups
        if attach is not None:
            self.cgroup = attach(self.runtime, self.index)
        if self.cgroup and "pids" in self.cgroup.dirs:
            try:
                current = self.cgroup.dirs["pids"][1] / "pids.current"
                self.pids_base = int(current.read_text())
            except (OSError, ValueError):
                self.pids_base = 4

    def failure_detail(self) -> str:
        return self.log_tail()

    def log_tail(self, n: int = 800) -> str:
        try:
            data = (self.host_dir / "zygote.log").read_bytes()[-n:]
        except OSError:
            return ""
        return "log: " + data.decode("utf-8", "replace").strip()

    def _running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def interrupt(self) -> None:
        p = self.proc
        if p is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)

    def _terminate(self) -> None:
        """SIGKILL the worker's process group and reap it (idempotent)."""
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
