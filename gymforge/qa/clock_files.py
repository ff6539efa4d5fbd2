"""The named files libfaketime keeps in ``/dev/shm``, and gymforge's clean-up of them (Linux).

libfaketime (0.9.10, as Debian 12 and Ubuntu 24.04 ship it) keeps a POSIX semaphore and a
shared memory object per process tree, named by the pid of the process that made them
(``sem.faketime_sem_PID`` and ``faketime_shm_PID``) and handed down in ``FAKETIME_SHARED``.
The ``faketime`` command makes a pair for the program it runs and removes it when that
program exits, but not when it is killed; a preloaded process started by one that is not
makes a pair for itself and never removes it, even on a normal exit. So every shifted fresh
process would leave a pair behind, and a later ``faketime`` command given one of those pids
refuses to start ("sem_open: File exists"; a CI run failed so, on a machine where earlier
runs had left 1,131 pairs). (A tool subprocess of a preloaded fresh process makes none,
measured with 0.9.10, even when its launcher scrubs its environment.) Therefore:

- ``qa`` removes the fresh process's pair (or its ``faketime`` command's) when it stops it,
  before reaping it (:func:`release`, from :func:`gymforge.qa.fresh.stop`);
- a fresh process whose ``qa`` died removes its tree's pair as it ends its process group
  (:func:`release_shared`). One killed outright by the parent-death signal cannot: that
  pair is left;
- the ``faketime`` command is started by a shell that first removes a stale pair at its own
  pid, which the command is about to name its own (:data:`CLEAR_STALE`).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

SHM_DIR = Path("/dev/shm")
"""Where Linux keeps POSIX semaphores (``sem.NAME``) and shared memory objects (``NAME``)."""
PAIR = ("sem.faketime_sem_{pid}", "faketime_shm_{pid}")
SHARED = re.compile(r"/faketime_sem_(\d{1,10}) /faketime_shm_\1")
"""A ``FAKETIME_SHARED`` value naming a pair by pid."""
CLEAR_STALE = 'rm -f -- {}; shift; exec "$@"'.format(
    " ".join(f'"$1/{name.format(pid="$$")}"' for name in PAIR)
)
"""``sh -c CLEAR_STALE sh SHM_DIR faketime ...``: exec the command, which keeps the shell's
pid, after removing the stale pair at that pid."""


def pair_files(pid: int) -> list[Path]:
    """The pair a ``faketime`` command or a preloaded process whose pid is ``pid`` makes."""
    return [SHM_DIR / name.format(pid=pid) for name in PAIR]


def release(pid: int) -> None:
    """Remove the pair named by ``pid``. Only while ``pid`` is held (the process runs, or is a
    zombie not yet reaped): then a pair at that pid is its own or stale, never another live
    process's. Its processes that still run keep what they mapped."""
    for path in pair_files(pid):
        with contextlib.suppress(FileNotFoundError, PermissionError):
            path.unlink()


def release_shared(variable: str) -> None:
    """Remove the pair ``FAKETIME_SHARED`` (``variable``) names when it is this process's or
    its parent's (a ``faketime`` command): both pids are held while this process runs."""
    match = SHARED.fullmatch(variable)
    if match is not None and int(match[1]) in (os.getpid(), os.getppid()):
        release(int(match[1]))
