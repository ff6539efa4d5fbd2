"""EXPERIMENTAL Docker backend: the same zygote protocol, one long-lived container per worker.

**Untested on the machine this was written on** (it has the Docker client but no engine); its
tests run only where ``docker info`` succeeds. Each worker is ``docker run -i --rm`` of an image
that has ``python3`` (and gcc/g++/node if those languages are wanted), with
``--network none --read-only --cap-drop ALL --security-opt no-new-privileges``, a per-worker
uid, ``--pids-limit`` and ``--memory`` for the whole container, a size-capped tmpfs job
directory, and the zygote code mounted read-only (never the artefact cache). The zygote is
pid 1 of the container, so the same cleanup guarantees hold (``kill(-1)`` after every job).
The host directories are bind-mounted, so the engine must run on this host.
Per-job memory limits are rlimits; the container's ``--memory`` is the outer bound.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.launch import DockerLauncher
from gymforge.sandbox.local import ZygotePool


def docker_available(docker: str = "docker") -> tuple[bool, str]:
    """``(True, server version)`` when a Docker engine answers, else ``(False, why)``."""
    exe = shutil.which(docker)
    if exe is None:
        return False, "the docker client is not installed"
    try:
        p = subprocess.run(
            [exe, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"docker info failed: {e}"
    if p.returncode != 0:
        return False, f"no Docker engine: {(p.stderr or p.stdout).strip()[:200]}"
    return True, p.stdout.strip()


class DockerBackend(ZygotePool):
    """EXPERIMENTAL: zygote workers in Docker containers (see the module docstring)."""

    name = "docker"

    def __init__(
        self,
        workers: int = 2,
        *,
        image: str = "python:3.11-slim",
        python: str = "python3",
        memory_bytes: int = 2 << 30,
        pids: int = 256,
        uid_base: int = 60000,
        seccomp: bool = True,
        cache_dir: Path | str | None = None,
        ready_timeout: float = 180.0,
    ) -> None:
        ok, why = docker_available()
        if not ok:
            raise IsolationUnavailableError(f"Docker backend unavailable: {why}")
        launcher = DockerLauncher(
            image=image,
            python=python,
            memory_bytes=memory_bytes,
            pids=pids,
            uid_base=uid_base,
            seccomp=seccomp,
        )
        super().__init__(
            launcher, workers, cache_dir=cache_dir, cgroups=False, ready_timeout=ready_timeout
        )
