"""Stopping cleanly: SIGTERM (what ``timeout``, schedulers and container stops send) and
SIGHUP (a closed terminal) stop a command the way Ctrl-C does. Each is handed to the SIGINT
handler in force when it arrives (asyncio's, during a run, which cancels the run so that it
writes ``summary.json``; Python's, which raises ``KeyboardInterrupt``), and the signal is
remembered for the message and the exit code (``failures.stop_exit``: 130, 143, 129)."""

from __future__ import annotations

import os
import signal
from types import FrameType

from gymforge.rollout.failures import stop_exit

FORWARDED = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)
_received: list[int] = []
_owner: list[int] = []


def _forward(signum: int, frame: FrameType | None) -> None:
    if _owner and os.getpid() != _owner[0]:  # a forked child inherited this: die as before
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:  # SIGINT ignored or default: stop all the same
        raise KeyboardInterrupt


def install() -> None:
    """Handle SIGTERM and SIGHUP like Ctrl-C in this process (from the main thread)."""
    _owner[:] = [os.getpid()]
    for signum in FORWARDED:
        signal.signal(signum, _forward)


def stopped_by() -> str:
    """The signal that stopped the command, by name (SIGINT when none was forwarded)."""
    return signal.Signals(_received[-1] if _received else signal.SIGINT).name


def exit_code() -> int:
    """The exit code of a stop: 128 + the signal number."""
    return stop_exit(_received[-1] if _received else signal.SIGINT)
