"""Garbage-collector pacing while episodes are in flight.

An episode keeps its state (the environment's world and task, the trajectory records built
so far) alive for as long as it runs, seconds or minutes. With thousands of episodes in
flight on one event loop, CPython's collector promotes a steady stream of these objects into
its oldest generation and, by default, runs a *full* collection every time that generation
has grown by a quarter (and 10 young collections have passed). A full collection walks the
whole heap: with 4,096 ``ledger`` episodes in flight that is ~700,000 objects and a pause of
0.3-0.5 s of the event loop every few seconds, which every episode waiting on the loop pays
as step latency (``benchmarks/concurrency.py`` on 2 cores: p99 step latency about 1.9 s
with CPython's default pacing, about 1.2 s with the pacing below).

Those full collections find next to nothing to free: episode state holds no reference
cycles and is freed by reference counting when the episode ends. So while at least one
episode is in flight in this process, :func:`paced_collections` raises the oldest
generation's threshold to :data:`FULL_COLLECTION_EVERY` young collections (CPython's default
is 10). Contract:

- young collections (generations 0 and 1) run exactly as configured, so short-lived
  reference cycles are reclaimed as promptly as before;
- a full collection still runs, at most once per ``FULL_COLLECTION_EVERY`` young
  collections, so long-lived cyclic garbage is bounded rather than kept forever;
- the previous thresholds are restored when the last episode in flight ends, unless
  someone changed them meanwhile (then theirs are kept); a disabled collector (threshold 0)
  or a larger oldest threshold is left alone. Nesting and threads are fine: a counter guarded by a
  lock tracks the episodes in flight;
- ``gc.collect()`` is unaffected.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

FULL_COLLECTION_EVERY = 1000
"""Young (generation-1) collections between two full collections while episodes run."""

_lock = threading.Lock()
_in_flight = 0
_saved: tuple[int, int, int] | None = None
"""The thresholds to restore when the last episode ends (None: nothing was changed)."""


@contextmanager
def paced_collections() -> Iterator[None]:
    """Hold for the duration of one episode: see the module docstring."""
    _enter()
    try:
        yield
    finally:
        _exit()


def _enter() -> None:
    global _in_flight, _saved
    with _lock:
        if _in_flight == 0:
            t0, t1, t2 = gc.get_threshold()
            if t0 > 0 and t2 < FULL_COLLECTION_EVERY:
                _saved = (t0, t1, t2)
                gc.set_threshold(t0, t1, FULL_COLLECTION_EVERY)
        _in_flight += 1


def _exit() -> None:
    global _in_flight, _saved
    with _lock:
        _in_flight -= 1
        if _in_flight == 0 and _saved is not None:
            t0, t1, _ = _saved
            if gc.get_threshold() == (t0, t1, FULL_COLLECTION_EVERY):
                gc.set_threshold(*_saved)
            _saved = None
