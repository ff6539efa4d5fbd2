"""Helpers shared by the sandbox tests (imported as a plain module: pytest puts this
directory on sys.path)."""

from __future__ import annotations

import os
from pathlib import Path

from gymforge.sandbox import Limits, Result, SandboxJob
from gymforge.sandbox.local import LocalBackend

# Sandbox uids for this test process: distinct from a real deployment's (60000+) and from
# any other test run going on at the same time on this machine.
UID_BASE = 100_000 + (os.getpid() % 5000) * 100

FAST = Limits(
    wall_time=5, cpu_time=3, memory_bytes=256 << 20, output_bytes=64 << 10, call_timeout=2
)


def run_py(backend: LocalBackend, source: str, **kw: object) -> Result:
    kw.setdefault("limits", FAST)
    return backend.run(SandboxJob(source=source, **kw))  # type: ignore[arg-type]


def processes_of_uids(uids: set[int]) -> list[tuple[int, str]]:
    """Host processes (pid, cmdline) whose real uid is in ``uids``."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            st = (p / "status").read_text()
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        uid = next(int(ln.split()[1]) for ln in st.splitlines() if ln.startswith("Uid:"))
        if uid in uids:
            found.append((int(p.name), cmd))
    return found


def children_of(pid: int) -> list[int]:
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split():
                out.append(int(c))
                out += children_of(int(c))
    except OSError:
        pass
    return out
