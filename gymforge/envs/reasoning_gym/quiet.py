"""Keeping reasoning-gym's own prints out of gymforge's streams.

Some reasoning-gym generators print (tower_of_hanoi writes every instance it generates to
stdout), which corrupts ``gymforge qa --json`` and ``serve --mcp --transport stdio``. Scoring
runs in the sandbox, where output is captured; generation and the oracle probe run here, so
``quiet()`` swallows what the calling thread writes to ``sys.stdout`` and ``sys.stderr``
while it is active. Other threads (a server's protocol writer) write through untouched: the
streams are replaced, once, by a forwarder that drops only the quiet threads' writes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_lock = threading.Lock()
_quiet: dict[int, int] = {}  # thread id -> nesting depth


class _Forwarder:
    """A text stream that forwards to ``real`` except for writes from quiet threads."""

    def __init__(self, real: TextIO) -> None:
        self.real = real

    def write(self, text: str) -> int:
        if threading.get_ident() in _quiet:
            return len(text)
        return self.real.write(text)

    def flush(self) -> None:
        if threading.get_ident() not in _quiet:
            self.real.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _install() -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, _Forwarder):
            setattr(sys, name, _Forwarder(stream))


@contextmanager
def quiet() -> Iterator[None]:
    """Drop this thread's writes to ``sys.stdout`` and ``sys.stderr`` for the duration."""
    me = threading.get_ident()
    with _lock:
        _install()
        _quiet[me] = _quiet.get(me, 0) + 1
    try:
        yield
    finally:
        with _lock:
            _quiet[me] -= 1
            if not _quiet[me]:
                del _quiet[me]
