"""Per-worker memory and pids cgroups (v1 or v2), created under this process's own cgroup.

They are a second line behind rlimits: the memory cgroup bounds runtimes that cannot live under
``RLIMIT_AS`` (V8, JVM, Go) plus the job's tmpfs, and its OOM-kill counter turns "SIGKILL from
nowhere" into the fact ``limits_hit.memory``; the pids cgroup caps a fork or thread bomb for
the whole worker and its ``max`` event counter gives ``limits_hit.processes``. Everything here
is best effort: when the hierarchy is missing or read-only, ``WorkerCgroup.available`` is empty
and the rlimits alone apply (``doctor`` reports which case holds).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Hierarchy:
    controller: str  # "memory" or "pids"
    version: int
    base: Path  # our own cgroup in this hierarchy (where children get created)


def _own_paths() -> dict[str, str]:
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            paths[c] = path
    return paths


def discover() -> dict[str, Hierarchy]:
    """Writable memory/pids hierarchies available to this process, v1 preferred when mounted."""
    own = _own_paths()
    found: dict[str, Hierarchy] = {}
    for ctrl in ("memory", "pids"):
        mount = ROOT / ctrl
        if ctrl in own and (mount / "cgroup.procs").exists():
            base = mount / own[ctrl].lstrip("/")
            if os.access(base, os.W_OK):
                found[ctrl] = Hierarchy(ctrl, 1, base)
                continue
        unified = ROOT / "unified" if (ROOT / "unified" / "cgroup.procs").exists() else ROOT
        if "" in own and (unified / "cgroup.controllers").exists():
            base = unified / own[""].lstrip("/")
            try:
                ctrls = (base / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if ctrl in ctrls and os.access(base, os.W_OK):
                found[ctrl] = Hierarchy(ctrl, 2, base)
    return found


class WorkerCgroup:
    """A memory and/or pids cgroup for one worker. ``procs_files`` are what a launcher writes
    its own pid into before exec'ing the sandbox, so every sandbox process starts inside."""

    def __init__(self, name: str, hierarchies: dict[str, Hierarchy] | None = None) -> None:
        self.dirs: dict[str, tuple[Hierarchy, Path]] = {}
        for ctrl, h in (discover() if hierarchies is None else hierarchies).items():
            path = h.base / name
            try:
                path.mkdir(exist_ok=True)
                if h.version == 2:
                    with contextlib.suppress(OSError):
                        (h.base / "cgroup.subtree_control").write_text(f"+{ctrl}")
                self.dirs[ctrl] = (h, path)
            except OSError:
                continue
        self._mem: int | None = None
        self._pids: int | None = None
        self._files: dict[str, str] = {}
        for ctrl, (h, path) in self.dirs.items():
            if ctrl == "memory":
                name = "memory.oom_control" if h.version == 1 else "memory.events"
                self._files["oom"] = str(path / name)
            else:
                self._files["pids"] = str(path / "pids.events")

    @property
    def available(self) -> list[str]:
        return sorted(self.dirs)

    @property
    def procs_files(self) -> list[str]:
        return sorted({str(p / "cgroup.procs") for _, p in self.dirs.values()})

    def _write(self, ctrl: str, v1: str, v2: str, value: str) -> bool:
        if ctrl not in self.dirs:
            return False
        h, path = self.dirs[ctrl]
        try:
            (path / (v1 if h.version == 1 else v2)).write_text(value)
            return True
        except OSError:
            return False

    def set_memory(self, limit: int) -> bool:
        if limit == self._mem:
            return True
        ok = self._write("memory", "memory.limit_in_bytes", "memory.max", str(limit))
        if ok and self.dirs["memory"][0].version == 2:
            self._write("memory", "", "memory.swap.max", "0")
        self._mem = limit if ok else None
        return ok

    def set_pids(self, limit: int) -> bool:
        if limit == self._pids:
            return True
        ok = self._write("pids", "pids.max", "pids.max", str(limit))
        self._pids = limit if ok else None
        return ok

    def oom_kills(self) -> int:
        """How many processes the OOM killer has killed in this cgroup so far."""
        return _counter(self._files["oom"], "oom_kill") if "oom" in self._files else 0

    def pids_max_events(self) -> int:
        """How many forks failed because ``pids.max`` was reached."""
        return _counter(self._files["pids"], "max") if "pids" in self._files else 0

    def remove(self) -> None:
        for _, path in self.dirs.values():
            with contextlib.suppress(OSError):
                path.rmdir()
        self.dirs.clear()
        self._files.clear()


def _counter(path: str, key: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 4096).decode()
        finally:
            os.close(fd)
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


def remove_stale(prefix: str = "gymforge-sb-") -> None:
    """Remove empty worker cgroups left by gymforge processes that no longer exist."""
    for h in discover().values():
        try:
            entries = list(h.base.iterdir())
        except OSError:
            continue
        for d in entries:
            if not d.name.startswith(prefix):
                continue
            pid = d.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    d.rmdir()
