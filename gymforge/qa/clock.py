"""The fresh process's shifted wall clock: finding libfaketime, and reaching tool subprocesses.

Finding it (parent side, :func:`find_faketime`). libfaketime is looked for as it is
installed, not only as a command: Debian and Ubuntu ship the preload library
(``libfaketime.so.1`` under ``/usr/lib/<multiarch>/faketime/``, package ``libfaketime``) apart
from the ``faketime`` command (package ``faketime``), and other systems put it under
``/usr/lib64``, ``/usr/local/lib`` or ``/usr/lib``. When the library is found the child is
started with ``LD_PRELOAD`` and ``FAKETIME`` set directly (no wrapper process, no shared
memory); the ``faketime`` command on ``PATH`` is the fallback when no library is found where
we look.

Reaching subprocesses (child side, :func:`propagate`). An environment's tools may run in
subprocesses the environment starts (an MCP stdio tool server such as one that returns
today's date). They must see the shifted clock too, or a date in a tool result replays
"deterministically" on the day QA runs and differs on any other day. ``LD_PRELOAD`` is
inherited, but many launchers pass an explicit, scrubbed environment (the MCP SDK's stdio
client passes only ``HOME``, ``PATH`` and a few more), so :func:`propagate` wraps
``subprocess.Popen`` (which ``asyncio`` and ``anyio`` subprocesses go through) to add the
clock variables to every environment it is given. gymforge's own code sandbox is exempt:
sandboxed programs get the real clock, as in production.

Checking it (child side, :class:`ClockAudit`). On Linux a watcher reads ``/proc`` for this
process's descendants and names each one in which libfaketime is not loaded (a statically
linked program, a Go binary, a launcher that clears ``LD_PRELOAD``): QA reports those tools
as not covered by the shifted clock. Descendants that exit within one polling interval can
be missed.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.qa.clock_files import CLEAR_STALE, SHM_DIR
from gymforge.settings import inherited_environ

LIBRARY = "libfaketime.so.1"
CLOCK_VARS = ("LD_PRELOAD", "FAKETIME", "FAKETIME_SHARED", "FAKETIME_DONT_FAKE_MONOTONIC")
EXEMPT_MODULES = ("gymforge.sandbox",)
AUDIT_POLL_S = 0.2


def library_dirs() -> list[Path]:
    """Where libfaketime's preload library is looked for, in order."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or f"{platform.machine()}-linux-gnu"
    bases = [f"/usr/lib/{multiarch}", "/usr/lib64", "/usr/lib", f"/lib/{multiarch}"]
    bases += ["/usr/local/lib", "/usr/local/lib64", "/opt/homebrew/lib"]
    return [Path(b) / sub for b in bases for sub in ("faketime", "")]


@dataclass(frozen=True)
class Faketime:
    """An installed libfaketime: its preload library, or else its ``faketime`` command."""

    library: Path | None
    command: str | None

    def wrap(self, cmd: list[str], env: dict[str, str], shift_s: int) -> list[str]:
        """``cmd`` run with the clock ``shift_s`` seconds ahead (``env`` is updated)."""
        for name in CLOCK_VARS:
            env.pop(name, None)
        if self.library is not None:
            env["LD_PRELOAD"] = str(self.library)
            env["FAKETIME"] = f"+{shift_s}"
            return cmd
        assert self.command is not None
        shell = ["/bin/sh", "-c", CLEAR_STALE, "sh", str(SHM_DIR)]  # see clock_files
        return [*shell, self.command, "-f", f"+{shift_s}", *cmd]

    def describe(self) -> str:
        return str(self.library) if self.library is not None else f"{self.command} (command)"


def find_faketime() -> Faketime | None:
    """The installed libfaketime, or None (see :func:`not_found`)."""
    for directory in library_dirs():
        lib = directory / LIBRARY
        if lib.is_file():
            return Faketime(library=lib, command=None)
    command = shutil.which("faketime")
    return Faketime(library=None, command=command) if command else None


def not_found() -> str:
    """Why the clock is not shifted when :func:`find_faketime` found nothing."""
    where = ", ".join(str(d) for d in library_dirs()[:4])
    return f"libfaketime not installed: no {LIBRARY} in {where}, ... and no faketime on PATH"


# --- child side ---------------------------------------------------------------------------


def tool_clock(environ: Mapping[str, str]) -> dict[str, str]:
    """The clock variables of this (shifted) process, for its subprocesses."""
    return {k: environ[k] for k in ("LD_PRELOAD", "FAKETIME") if environ.get(k)}


def _from_sandbox() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith(EXEMPT_MODULES):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def propagate(clock: dict[str, str], exempt: set[int]) -> None:
    """Make every ``subprocess.Popen`` outside gymforge's sandbox carry ``clock`` (module
    docstring); pids of the sandbox's own subprocesses are added to ``exempt``."""
    if not clock or getattr(subprocess.Popen, "_gymforge_clock", False):
        return
    original: Callable[..., None] = subprocess.Popen.__init__

    @functools.wraps(original)
    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        sandbox = _from_sandbox()
        if not sandbox:
            base = kwargs.get("env")
            kwargs["env"] = {**(inherited_environ() if base is None else base), **clock}
        original(self, *args, **kwargs)
        if sandbox:
            exempt.add(self.pid)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]
    subprocess.Popen._gymforge_clock = True  # type: ignore[attr-defined]


def _processes() -> Iterator[tuple[int, int]]:
    """(pid, parent pid) of every process ``/proc`` shows."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            yield int(entry.name), int(stat.rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue


def _descendants(root: int, exempt: set[int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in _processes():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in exempt:
                out.append(pid)
                todo.append(pid)
    return out


def _name(pid: int) -> str:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    words = [a.decode(errors="replace") for a in args if a]
    if not words:
        return f"pid {pid}"
    return " ".join([Path(words[0]).name, *words[1:]])[:160]


class ClockAudit:
    """Names the descendants of this process that run without libfaketime (Linux only)."""

    def __init__(self, exempt: set[int]) -> None:
        self.exempt = exempt
        self.unshifted: list[str] = []
        self._lock = threading.Lock()
        self.available = sys.platform.startswith("linux") and Path("/proc/self/maps").exists()

    def start(self) -> None:
        if self.available:
            threading.Thread(target=self._loop, name="qa-clock-audit", daemon=True).start()

    def _loop(self) -> None:
        # time.sleep, not Event.wait: a timed wait under libfaketime lasts the clock shift
        while True:
            self.scan()
            time.sleep(AUDIT_POLL_S)

    def scan(self) -> list[str]:
        """Check the current descendants now; returns every name found so far."""
        if not self.available:
            return []
        for pid in _descendants(os.getpid(), self.exempt):
            try:
                maps = Path(f"/proc/{pid}/maps").read_text(errors="replace")
                name = _name(pid)
            except OSError:
                continue  # exited, or not ours to read
            if "libfaketime" in maps:
                continue
            with self._lock:
                if name not in self.unshifted:
                    self.unshifted.append(name)
        with self._lock:
            return list(self.unshifted)
