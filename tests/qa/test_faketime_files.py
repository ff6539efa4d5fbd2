"""libfaketime's named files in ``/dev/shm`` neither stop a fresh process nor pile up.

libfaketime 0.9.10 keeps a POSIX semaphore and a shared memory object named by a pid
(``sem.faketime_sem_PID``, ``faketime_shm_PID``). The ``faketime`` command (the fallback
when no preload library is found) makes them with ``O_EXCL`` and removes them only when the
program it runs exits, not when it is killed; a preloaded process makes its own and never
removes them. A later ``faketime`` given the same pid refuses to start ("faketime:
sem_open: File exists"): a CI run failed so, on a machine where earlier QA runs had left
1,131 pairs. (:mod:`gymforge.qa.clock_files`.)
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gymforge.qa import clock, clock_files
from gymforge.qa.fresh import FreshProcess, stop

COMMAND = shutil.which("faketime")
LIBRARY = clock.find_faketime()
LAST_PID = Path("/proc/sys/kernel/ns_last_pid")
pytestmark = pytest.mark.skipif(not clock_files.SHM_DIR.is_dir(), reason="no /dev/shm")
needs_command = pytest.mark.skipif(COMMAND is None, reason="no faketime command")
needs_library = pytest.mark.skipif(
    LIBRARY is None or LIBRARY.library is None, reason="no libfaketime library"
)
AHEAD = 300  # pids past the last one given out that get a stale pair of files
POLLS = 600  # x 0.05 s


def wrapped(cmd: list[str]) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    assert COMMAND is not None
    return clock.Faketime(library=None, command=COMMAND).wrap(cmd, env, 86400), env


def wait_for(predicate: Callable[[], bool]) -> bool:
    for _ in range(POLLS):
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def stale_files() -> Iterator[None]:
    """A stale pair of wrapper files for each of the next pids this machine gives out (as
    killed wrappers leave them). Only the files made here are removed afterwards: one that
    a wrapper replaced is that wrapper's (compared by inode)."""
    if not LAST_PID.exists():
        pytest.skip("needs /proc/sys/kernel/ns_last_pid")
    first = int(LAST_PID.read_text()) + 1
    made: dict[Path, int] = {}
    for pid in range(first, first + AHEAD):
        for path in clock_files.pair_files(pid):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                continue
            made[path] = os.fstat(fd).st_ino
            os.close(fd)
    try:
        yield
    finally:
        for path, inode in made.items():
            try:
                if path.stat().st_ino == inode:
                    path.unlink()
            except FileNotFoundError:
                pass


@needs_command
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pids from /proc")
@pytest.mark.usefixtures("stale_files")
def test_a_stale_pair_at_the_wrappers_pid_does_not_stop_it() -> None:
    cmd, env = wrapped([sys.executable, "-c", "import time; print(time.time())"])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) > time.time() + 86400 / 2  # the clock was shifted


@needs_command
def test_stopping_a_wrapped_process_removes_the_wrappers_files() -> None:
    cmd, env = wrapped([sys.executable, "-c", "import time; time.sleep(600)"])
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    files = clock_files.pair_files(proc.pid)
    try:
        assert wait_for(lambda: all(p.exists() for p in files)), "the wrapper made no files"
    finally:
        stop(proc)
    assert proc.returncode is not None
    assert not [p for p in files if p.exists()]


@needs_command
def test_a_child_that_kills_its_group_removes_its_wrappers_files() -> None:
    """The watchdog's end (``lifeline._end``): the child kills its own process group, the
    wrapper that waits for it included."""
    code = "import os; from gymforge.qa.lifeline import _end\n"
    code += "_end(True, os.environ['FAKETIME_SHARED'])"
    cmd, env = wrapped([sys.executable, "-c", code])
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL  # the group was killed, the wrapper in it
    assert not [p for p in clock_files.pair_files(proc.pid) if p.exists()]


@needs_library
def test_the_fresh_processs_pair_is_removed_when_it_is_stopped() -> None:
    proc = FreshProcess("digits")
    try:
        child = proc.ready()["pid"]
        assert proc.clock_shift is not None
        files = clock_files.pair_files(child)
        made = all(f.exists() for f in files)  # libfaketime 0.9.10 makes one per process
    finally:
        proc.close()
    if not made:
        pytest.skip("this libfaketime keeps no pair per process")
    assert not [f for f in files if f.exists()]
