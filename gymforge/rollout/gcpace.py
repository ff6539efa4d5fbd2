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
is 10).

Young collections cost the same way, at a smaller scale: every 700 net allocations
(CPython's default) a generation-0 collection walks the young objects, and most of what it
finds alive is the in-flight episodes' state (a parsed reply of a few hundred objects, the
records being built), which it promotes to be walked again by generation-1 collections and
then counted towards a full one. On one ``math`` run of 2,000 single-turn episodes at
concurrency 64 that was about 0.17 ms of collector CPU per episode, 15% of the client's
(``benchmarks/rollout_cpu.py``, measured with ``gc.callbacks``), and the objects it promoted
made the full collection come due when the run ended (70-100 ms over the whole heap). So
the youngest threshold is raised to at least :data:`YOUNG_COLLECTION_EVERY` net allocations
too: the same run then spends under 0.01 ms per episode collecting, and promotes too
little for a full collection to come due. Contract:

- young collections still run, every ``YOUNG_COLLECTION_EVERY`` net allocations of
  container objects, so short-lived reference cycles are still reclaimed, after a bounded
  number of allocations (rather than 700);
- a full collection still runs, at most once per ``FULL_COLLECTION_EVERY`` young
  collections, so long-lived cyclic garbage is bounded rather than kept forever;
- a threshold already at least as lax is kept as it is; a disabled collector (threshold
  0) is left alone;
- the previous thresholds are restored when the last episode in flight ends, unless
  someone changed them meanwhile (then theirs are kept). Nesting and threads are fine: a
  counter guarded by a lock tracks the episodes in flight. A local run also counts as one
  (:func:`hold` from its executor's ``open`` to its ``close``): between two of its episodes
  (every episode of a zero-latency run waiting on the writer's group commit) the thresholds
  would otherwise be restored and raised again dozens of times a run, each restore
  collecting what the raised thresholds had let accumulate. The runner holds it too, from
  its start to its summary written (``runner._run``): the summary walks every episode
  record of the run, and with the default thresholds back in force that walk set off a full
  collection over the whole heap (70-100 ms at the end of a ``math`` run of 2,000
  episodes in a fresh process). Held through it, the run sets none off itself: the
  collection falls due later in the process, at the latest at its exit, where CPython runs
  a full collection anyway (a CLI run paid both);
- ``gc.collect()`` is unaffected.
"""

from __future__ import annotations

import gc
import threading
from contextlib import AbstractContextManager

FULL_COLLECTION_EVERY = 1000
"""Young (generation-1) collections between two full collections while episodes run."""

YOUNG_COLLECTION_EVERY = 10_000
"""Net allocations of container objects between two young (generation-0) collections while
episodes run (CPython's default is 700)."""

_lock = threading.Lock()
_in_flight = 0
_saved: tuple[int, int, int] | None = None
"""The thresholds to restore when the last episode ends (None: nothing was changed)."""
_paced: tuple[int, int, int] | None = None
"""The thresholds set while episodes run (restored from only if still in force)."""


class _Paced:
    """The context :func:`paced_collections` hands out: ``_enter`` on entry, ``_exit`` on
    leaving however the block ends (exceptions propagate). It holds no state, so one serves
    every episode, without the generator a ``contextmanager`` makes per use."""

    __slots__ = ()

    def __enter__(self) -> None:
        _enter()

    def __exit__(self, *exc: object) -> None:
        _exit()


_PACED = _Paced()


def paced_collections() -> AbstractContextManager[None]:
    """Hold for the duration of one episode: see the module docstring."""
    return _PACED


def hold() -> None:
    """Count as one more episode in flight until :func:`release` (module docstring)."""
    _enter()


def release() -> None:
    """End one :func:`hold`."""
    _exit()


def in_flight() -> int:
    """How many episodes (counting each :func:`hold`) are in flight in this process now."""
    return _in_flight


def paced(thresholds: tuple[int, int, int]) -> tuple[int, int, int]:
    """The thresholds in force while episodes run, given those in force before."""
    t0, t1, t2 = thresholds
    if t0 <= 0:
        return thresholds  # a disabled collector stays disabled
    return max(t0, YOUNG_COLLECTION_EVERY), t1, max(t2, FULL_COLLECTION_EVERY)


def _enter() -> None:
    global _in_flight, _saved, _paced
    with _lock:
        if _in_flight == 0:
            before = gc.get_threshold()
            during = paced(before)
            if during != before:
                _saved, _paced = before, during
                gc.set_threshold(*during)
        _in_flight += 1


def _exit() -> None:
    global _in_flight, _saved, _paced
    with _lock:
        _in_flight -= 1
        if _in_flight == 0 and _saved is not None:
            if gc.get_threshold() == _paced:
                gc.set_threshold(*_saved)
            _saved = _paced = None
