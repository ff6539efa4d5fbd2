"""The fresh-process child dies with the ``gymforge qa`` that started it.

An interrupted or killed ``qa`` must not leave its child running (issue 36: one was found
at 100% CPU 24 minutes later). The child runs in its own process group (``FreshProcess``
starts it with ``start_new_session``; the ``faketime`` wrapper and whatever the environment
starts are in that group too), and three things end the group:

- the parent stops it: ``FreshProcess.close`` (also run at exit, after Ctrl-C) and a
  timed-out request kill the whole group, not only the direct child (which may be the
  ``faketime`` wrapper);
- the parent dies without stopping it (SIGKILL, SIGTERM, a crash): on Linux the child asks
  for a parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` through ``ctypes``) when
  its parent is ``qa`` itself and ``qa`` started it from its main thread (the signal follows
  the *thread* that forked);
- everywhere, and through the ``faketime`` wrapper: a watchdog thread in the child polls
  ``qa``'s pid (:data:`PARENT_VAR`) every :data:`POLL_S` seconds and kills the group when it
  is gone (no such process, or a zombie).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from pathlib import Path

from gymforge.qa.clock_files import release_shared

PARENT_VAR = "GYMFORGE_QA_PARENT_PID"
"""The pid of the ``qa`` process, for the child's watchdog."""
PDEATHSIG_VAR = "GYMFORGE_QA_PDEATHSIG"
"""Set to ``1`` when the child may ask for a parent-death signal (see the module docstring)."""
POLL_S = 0.25
_PR_SET_PDEATHSIG = 1


def child_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` plus what the child needs to follow this process (called by the parent)."""
    out = {**env, PARENT_VAR: str(os.getpid())}
    main = threading.current_thread() is threading.main_thread()
    out[PDEATHSIG_VAR] = "1" if main else "0"
    return out


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (the child started with a new session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): the signal test is all there is
    return state not in ("Z", "X")


def set_parent_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent (thread) exits; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def follow_parent() -> None:
    """In the child: die with ``qa`` (module docstring). A no-op when not started by it."""
    try:
        parent = int(os.environ.get(PARENT_VAR, ""))
    except ValueError:
        return
    if os.environ.get(PDEATHSIG_VAR) == "1" and os.getppid() == parent:
        set_parent_death_signal()
    try:
        own_group = os.getpgid(parent) != os.getpgrp()
    except ProcessLookupError:  # died before the signal was armed
        own_group = True
    shared = os.environ.get("FAKETIME_SHARED", "")
    if not alive(parent):
        _end(own_group, shared)
    watchdog = threading.Thread(
        target=_watch, args=(parent, own_group, shared), name="qa-parent-watchdog", daemon=True
    )
    watchdog.start()


def _watch(parent: int, own_group: bool, shared: str) -> None:
    # time.sleep, not Event.wait: libfaketime shifts the clock of pthread_cond_timedwait,
    # so a timed wait under faketime would last the clock shift (weeks)
    while True:
        time.sleep(POLL_S)
        if not alive(parent):
            _end(own_group, shared)


def _end(own_group: bool, shared: str = "") -> None:
    """Kill this process's group when it is not ``qa``'s (the faketime wrapper, tool
    subprocesses), then this process. The libfaketime pair this process tree shares goes
    first (``shared``, its ``FAKETIME_SHARED``: :mod:`gymforge.qa.clock_files`)."""
    release_shared(shared)
    if own_group:
        kill_group(os.getpgrp())
    os._exit(1)
