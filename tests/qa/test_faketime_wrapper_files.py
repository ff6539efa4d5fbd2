"""The ``faketime`` wrapper's named files neither stop a fresh process nor pile up.

The ``faketime`` command (libfaketime 0.9.x, the fallback when no preload library is found)
creates a POSIX semaphore and a shared memory object named by its own pid
(``/dev/shm/sem.faketime_sem_PID`` and ``/dev/shm/faketime_shm_PID`` on Linux), with
``O_EXCL``, and removes them only when the program it runs exits. A wrapper that is killed
(a timed-out request, the child's watchdog after ``qa`` died) leaves them behind, and a
later wrapper that is given the same pid refuses to start: "faketime: sem_open: File
exists". A CI run failed so, on a machine where earlier runs had left 1,131 such pairs.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymforge.qa import clock
from gymforge.qa.fresh import stop

COMMAND = shutil.which("faketime")
LAST_PID = Path("/proc/sys/kernel/ns_last_pid")
pytestmark = [
    pytest.mark.skipif(COMMAND is None, reason="no faketime command"),
    pytest.mark.skipif(not clock.SHM_DIR.is_dir(), reason="no /dev/shm"),
]
AHEAD = 300  # pids past the last one given out that get a stale pair of files
POLLS = 600  # x 0.05 s


def wrapped(cmd: list[str]) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    assert COMMAND is not None
    return clock.Faketime(library=None, command=COMMAND).wrap(cmd, env, 86400), env


def wait_for(predicate: object) -> bool:
    for _ in range(POLLS):
        if predicate():  # type: ignore[operator]
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
        for path in clock.wrapper_files(pid):
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pids from /proc")
@pytest.mark.usefixtures("stale_files")
def test_a_stale_pair_at_the_wrappers_pid_does_not_stop_it() -> None:
    cmd, env = wrapped([sys.executable, "-c", "import time; print(time.time())"])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) > time.time() + 86400 / 2  # the clock was shifted


def test_stopping_a_wrapped_process_removes_the_wrappers_files() -> None:
    cmd, env = wrapped([sys.executable, "-c", "import time; time.sleep(600)"])
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    files = clock.wrapper_files(proc.pid)
    try:
        assert wait_for(lambda: all(p.exists() for p in files)), "the wrapper made no files"
    finally:
        stop(proc)
    assert proc.returncode is not None
    assert not [p for p in files if p.exists()]


def test_a_child_that_kills_its_group_removes_its_wrappers_files() -> None:
    """The watchdog's end (``lifeline._end``): the child kills its own process group, the
    wrapper that waits for it included."""
    code = "from gymforge.qa.lifeline import _end; _end(True)"
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
    assert not [p for p in clock.wrapper_files(proc.pid) if p.exists()]
