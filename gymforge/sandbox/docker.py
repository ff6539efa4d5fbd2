"""The container backend: the same zygotes and wire protocol, one long-lived container each.

Each worker is ``CLI run -i --rm`` of an image with ``python3`` (and the compilers/runtimes
of the languages it judges), the zygote as pid 1 speaking frames on stdin/stdout, so a job
costs what a local job costs (a ``fork`` in the zygote) and never a container start. The
engine enforces, per container:

- ``--network none``: no interface but ``lo``, no DNS, no route to a host listener;
- ``--read-only`` root (and, on podman, ``--read-only-tmpfs=false``: no writable ``/tmp``,
  ``/var/tmp`` or ``/run``), ``--ipc none`` (no ``/dev/shm``), a read-only empty
  ``/dev/mqueue`` (the engine mounts a writable one, which would carry message queues from
  job to job), and one writable place: the
  size-capped tmpfs job directory, wiped by the zygote after every job;
- ``--user U:U`` (``uid_base + index``, unprivileged), ``--cap-drop ALL``,
  ``--security-opt no-new-privileges``, the engine's seccomp profile (and the zygote's own);
- ``--memory``/``--memory-swap`` and ``--pids-limit`` as the worker's outer bounds. Once the
  container runs, its own cgroup (the engine's, read from the container's init on the host)
  is tightened per job to the job's memory and process limits, and its OOM-kill and
  ``pids.max`` counters turn kills into the facts ``limits_hit.memory``/``processes``, as the
  local backend's worker cgroups do.

Only the zygote's code is mounted (read-only); never the artefact cache, which is private to
this backend and keyed by the image's id (the image's compilers made those artefacts). A
container that dies (killed, OOM-killed as a whole, the engine gone) is an infrastructure
error: the job is retried once on a fresh worker, and if that fails too the result is
``internal_error``, never a verdict. The bind mount means the engine must run on this host.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from gymforge.sandbox.cgroups import ROOT, Hierarchy, WorkerCgroup
from gymforge.sandbox.docker_engine import (
    Engine,
    ImageFacts,
    default_image,
    engine,
    engine_env,
    image_facts,
    require_languages,
    run_engine,
)
from gymforge.sandbox.languages import default_cache_dir, get_language
from gymforge.sandbox.launch import BASE_ENV, Runtime, SandboxPaths, zygote_config
from gymforge.sandbox.local import HOST_GRACE, ZygotePool
from gymforge.sandbox.models import Result, SandboxJob

DEFAULT_UID_BASE = 62000  # apart from the local backend's 60000+: RLIMIT_NPROC counts per uid


@dataclass
class DockerLauncher:
    """Builds one worker's ``run`` command line (see the module docstring)."""

    engine: Engine
    image: str
    python: str = "/usr/bin/python3"
    uid_base: int = DEFAULT_UID_BASE
    memory_bytes: int = 2 << 30
    pids: int = 256
    jobdir_bytes: int = 256 << 20
    seccomp: bool = True
    name: str = "docker"
    isolated: bool = True

    def paths(self, runtime: Runtime, index: int) -> SandboxPaths:
        return SandboxPaths("/tmp/job", "/.gymforge")

    def uid(self, index: int) -> int:
        return self.uid_base + index

    def container(self, runtime: Runtime, index: int) -> str:
        return f"{runtime.root.name}-w{index}"

    def env(self) -> dict[str, str]:
        return engine_env()

    def command(self, runtime: Runtime, index: int) -> list[str]:
        uid = self.uid(index)
        paths = self.paths(runtime, index)
        podman_only = ["--read-only-tmpfs=false"] if self.engine.podman else []
        return [
            self.engine.cli,
            *("run", "-i", "--rm", "--name", self.container(runtime, index)),
            *("--network", "none", "--ipc", "none", "--read-only", *podman_only),
            *("--cap-drop", "ALL", "--security-opt", "no-new-privileges"),
            *("--user", f"{uid}:{uid}", "--pids-limit", str(self.pids)),
            *("--memory", str(self.memory_bytes), "--memory-swap", str(self.memory_bytes)),
            # any --ulimit replaces the configured defaults, so nproc goes with nofile
            *("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"),
            *("--tmpfs", f"{paths.jobdir}:rw,exec,nosuid,nodev,size={self.jobdir_bytes},mode=1777"),
            # the engine's writable mqueue mount would carry message queues from job to job
            *("--tmpfs", "/dev/mqueue:ro,nosuid,nodev,noexec,size=4k,mode=0555"),
            *("-v", f"{runtime.lib}:{paths.libdir}:ro"),
            *("-w", paths.jobdir, "--hostname", "gymforge", "--entrypoint", self.python),
            *(x for k, v in BASE_ENV.items() for x in ("-e", f"{k}={v}")),
            self.image,
            *("-I", "-S", f"{paths.libdir}/zygote.py", zygote_config(paths, self.seccomp)),
        ]

    def attach_cgroup(self, runtime: Runtime, index: int) -> WorkerCgroup | None:
        """The running container's own memory and pids cgroups, found through its init's
        host pid; ``None`` when they cannot be found or written (rlimits and the container's
        fixed bounds still apply)."""
        name = self.container(runtime, index)
        p = run_engine(self.engine.cli, "inspect", "--format", "{{.State.Pid}}", name, timeout=30)
        pid = p.stdout.decode().strip()
        if p.returncode != 0 or not pid.isdigit() or pid == "0":
            return None
        return container_cgroup(int(pid), self.memory_bytes, self.pids)

    def on_kill(self, runtime: Runtime, index: int) -> None:
        """Killing the ``run`` client does not always stop the container: remove it by name."""
        run_engine(self.engine.cli, "rm", "-f", "-t", "0", self.container(runtime, index))


class ContainerCgroup(WorkerCgroup):
    """A container's own cgroups, which the engine created with the worker's outer bounds:
    per-job limits may tighten them, never loosen them past those bounds, and the engine,
    not we, removes the directories."""

    def __init__(
        self, name: str, hierarchies: dict[str, Hierarchy], memory_max: int, pids_max: int
    ) -> None:
        super().__init__(name, hierarchies)
        self.memory_max, self.pids_max = memory_max, pids_max

    def set_memory(self, limit: int) -> bool:
        return super().set_memory(min(limit, self.memory_max))

    def set_pids(self, limit: int) -> bool:
        return super().set_pids(min(limit, self.pids_max))

    def remove(self) -> None:
        self.dirs.clear()
        self._files.clear()


def container_cgroup(host_pid: int, memory_max: int, pids_max: int) -> ContainerCgroup | None:
    """The memory and pids cgroups process ``host_pid`` (a container's init) is in."""
    try:
        lines = Path(f"/proc/{host_pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    found: dict[str, Hierarchy] = {}
    leaf: dict[str, str] = {}
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        for ctrl in ("memory", "pids"):
            if ctrl in ctrls.split(","):
                full, version = ROOT / ctrl / path.lstrip("/"), 1
            elif ctrls == "" and (ROOT / "cgroup.controllers").exists():
                full, version = ROOT / path.lstrip("/"), 2
            else:
                continue
            if ctrl not in found and full.is_dir() and os.access(full, os.W_OK):
                found[ctrl] = Hierarchy(ctrl, version, full.parent)
                leaf[ctrl] = full.name
    names = set(leaf.values())
    if len(names) != 1:  # one name for both controllers, as the engine creates them
        return None
    cg = ContainerCgroup(names.pop(), found, memory_max, pids_max)
    return cg if cg.available else None


class DockerBackend(ZygotePool):
    """Zygote workers in long-lived containers (see the module docstring)."""

    name = "docker"
    worker_death_retries = 1

    def __init__(
        self,
        workers: int = 2,
        *,
        image: str | None = None,
        languages: tuple[str, ...] = ("python",),
        python: str = "/usr/bin/python3",
        memory_bytes: int = 2 << 30,
        pids: int = 256,
        jobdir_bytes: int = 256 << 20,
        uid_base: int = DEFAULT_UID_BASE,
        seccomp: bool = True,
        cache_dir: Path | str | None = None,
        ready_timeout: float = 120.0,
        host_grace: float = HOST_GRACE,
    ) -> None:
        self.engine = engine()
        self.image = image or default_image()
        self.facts: ImageFacts = image_facts(self.engine, self.image)
        require_languages(self.facts, [get_language(n) for n in ("python", *languages)])
        launcher = DockerLauncher(
            self.engine,
            self.image,
            python=self.facts.programs.get("python3", python),
            uid_base=uid_base,
            memory_bytes=memory_bytes,
            pids=pids,
            jobdir_bytes=jobdir_bytes,
            seccomp=seccomp,
        )
        digest = self.facts.image_id.removeprefix("sha256:")[:16]
        cache = Path(cache_dir) if cache_dir else default_cache_dir() / f"image-{digest}"
        super().__init__(
            launcher,
            workers,
            cache_dir=cache,
            cgroups=False,
            ready_timeout=ready_timeout,
            host_grace=host_grace,
        )

    def run(self, job: SandboxJob) -> Result:
        """Refuse a language the image lacks (naming its runtime), then run as every zygote
        pool does."""
        require_languages(self.facts, [get_language(job.language)])
        return super().run(job)

    def close(self) -> None:
        super().close()
        # a client killed before it could remove its container leaves it behind: sweep by name
        prefix = self.runtime.root.name if hasattr(self, "runtime") else None
        if prefix:
            deadline = time.monotonic() + 30
            with contextlib.suppress(Exception):
                p = run_engine(
                    self.engine.cli,
                    *("ps", "-a", "--filter", f"name={prefix}", "--format", "{{.Names}}"),
                    timeout=max(1.0, deadline - time.monotonic()),
                )
                names = p.stdout.decode().split()
                if names:
                    run_engine(self.engine.cli, "rm", "-f", "-t", "0", *names, timeout=30)


__all__ = [
    "ContainerCgroup",
    "DockerBackend",
    "DockerLauncher",
    "container_cgroup",
    "docker_available",
]


def docker_available() -> tuple[bool, str]:
    """``(True, "podman 4.3.1 at /usr/bin/podman")`` when an engine answers, else
    ``(False, why)`` (the one-line reason, naming ``make containers``)."""
    try:
        eng = engine()
    except Exception as e:  # IsolationUnavailableError: the reason is the message
        return False, str(e)
    kind = "podman" if eng.podman else "docker"
    return True, f"{kind} {eng.version} at {eng.cli}"
