"""A memory guard for the test processes: one runaway test fails alone, with a diagnosis.

A full run's xdist worker twice grew past 8 GB of resident memory (once to 22.5 GB, when the
kernel's OOM killer ended it and the memory pressure failed unrelated tests). The guard's
first report found the cause: a swe task's mutated code running untraced past its line
budget (``tests/envs/swe/test_line_budget.py``).

Each test process (the xdist workers, or the single pytest process) watches its own resident
memory from a daemon thread, twice a second. Past :data:`LIMIT_BYTES` it writes a report (the
running test's id, the memory, every thread's stack) to the run's report directory and to
the process's own stderr, and raises :class:`MemoryGuardTripped` in the main thread, where
tests run: that test fails with the traceback of where it was, its memory is freed as the
stack unwinds, and the run goes on (ending the worker instead would leave xdist's
``loadgroup`` scheduler waiting forever for the lost worker's tests). While the process
stays over the limit the exception is raised again every :data:`RETRY_S`; past twice the
limit (memory held by something no exception reaches) the process exits with code 70. The
controller prints every report at the end (``pytest_terminal_summary``). No test of this
suite needs a tenth of the limit.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

LIMIT_BYTES = 8 << 30
POLL_S = 0.5
RETRY_S = 5.0
_DIR_VAR = "GYMFORGE_TEST_MEMORY_REPORTS"
_LIMIT_VAR = "GYMFORGE_TEST_MEMORY_LIMIT_MIB"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """This process's resident memory (Linux ``/proc/self/statm``), None elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


class MemoryGuardTripped(BaseException):
    """Raised in the main thread when the process passed the memory limit (a BaseException,
    so the code under test's ``except Exception`` does not swallow it)."""


class MemoryGuard:
    """The watcher of one test process; ``current`` is the running test's id."""

    def __init__(self, reports: Path, console: int | None, limit: int = LIMIT_BYTES) -> None:
        self.reports = reports
        self.console = console  # the process's stderr from before pytest captured it
        self.limit = limit
        self.current = "(between tests)"
        self.main = threading.main_thread().ident

    def start(self) -> None:
        if resident_bytes() is not None:
            threading.Thread(target=self._watch, name="test-memory-guard", daemon=True).start()

    def _watch(self) -> None:
        last = 0.0
        while True:
            rss = resident_bytes()
            if rss is not None and rss > self.limit and time.monotonic() - last > RETRY_S:
                self.report(rss)
                if rss > 2 * self.limit:
                    os._exit(70)
                self.interrupt()
                last = time.monotonic()
            time.sleep(POLL_S)

    def report(self, rss: int) -> None:
        head = (
            f"test process {os.getpid()} passed {self.limit >> 20} MiB of resident memory "
            f"({rss >> 20} MiB) while running {self.current}\n"
        )
        self.reports.mkdir(parents=True, exist_ok=True)
        path = self.reports / f"memory-guard-{os.getpid()}-{time.monotonic_ns()}.txt"
        with open(path, "w") as f:
            f.write(f"{head}\nthreads:\n")
            f.flush()
            faulthandler.dump_traceback(f, all_threads=True)
        if self.console is not None:
            os.write(self.console, f"\nmemory guard: {head}".encode())

    def interrupt(self) -> None:
        """Raise :class:`MemoryGuardTripped` in the main thread at its next bytecode."""
        if self.main is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self.main), ctypes.py_object(MemoryGuardTripped)
            )


def reports_dir() -> Path:
    """The run's report directory: made by the controller (and removed by it at the end,
    :func:`pytest_unconfigure`), inherited by its workers."""
    global _made
    if _DIR_VAR not in os.environ:
        os.environ[_DIR_VAR] = tempfile.mkdtemp(prefix="gymforge-test-memory-")
        _made = Path(os.environ[_DIR_VAR])
    return Path(os.environ[_DIR_VAR])


def console_fd(config: pytest.Config) -> int | None:
    """A copy of the stderr pytest's capture replaced (its saved descriptor), else None."""
    capture = config.pluginmanager.getplugin("capturemanager")
    err = getattr(getattr(capture, "_global_capturing", None), "err", None)
    saved = getattr(err, "targetfd_save", None)
    try:
        return os.dup(saved) if isinstance(saved, int) else None
    except OSError:
        return None


def pytest_configure(config: pytest.Config) -> None:
    global _guard
    limit = int(os.environ.get(_LIMIT_VAR, "0")) << 20 or LIMIT_BYTES  # the guard's own test
    _guard = MemoryGuard(reports_dir(), console_fd(config), limit)
    _guard.start()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    if _guard is not None:
        _guard.current = nodeid


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for path in sorted(reports_dir().glob("memory-guard-*.txt")):
        terminalreporter.write_sep("=", f"memory guard: {path.name}")
        terminalreporter.write_line(path.read_text()[:20000])


def pytest_unconfigure(config: pytest.Config) -> None:
    if _made is not None:  # the controller's: its reports were printed in the summary
        shutil.rmtree(_made, ignore_errors=True)


_guard: MemoryGuard | None = None
_made: Path | None = None
