"""Admission pacing: new episodes never starve the episodes already in flight.

Starting an episode (building the environment's task and world, the reset observation, the
first records) is CPU work that runs without yielding to the event loop. When a run starts,
or when many episodes finish together, thousands of workers want to start one at the same
moment; started in one pass of the loop, their resets would run back to back for a second or
more while the steps of the episodes already in flight (a policy's answer has arrived, a
tool has returned) wait behind them. It is the same problem an inference server solves by
chunking prefills so they do not stall decodes.

``AdmissionGate`` lets at most ``per_turn`` episodes start per turn of the event loop; the
others wait, in arrival order, for the following turns, and in between the loop serves the
timers and I/O of every episode in flight. When fewer than ``per_turn`` episodes start at a
time (the steady state of a run), nobody waits. Every episode is still admitted, as soon as
the loop has served what was already ready, and how many run at once (``concurrency``) is
unchanged: only the order of work inside one burst changes, never what any episode does.
"""

from __future__ import annotations

import asyncio
from collections import deque

PER_TURN = 16
"""Default episode starts per loop turn: 16 ledger resets are ~5 ms of CPU."""


class AdmissionGate:
    """``await gate.enter()`` before starting an episode. One gate per event loop."""

    def __init__(self, per_turn: int = PER_TURN) -> None:
        if per_turn < 1:
            raise ValueError("per_turn must be at least 1")
        self.per_turn = per_turn
        self._used = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._turn_scheduled = False

    async def enter(self) -> None:
        """Return when this episode may start (at once, unless this turn's quota is spent)."""
        if self._used < self.per_turn and not self._waiters:
            self._used += 1
            self._schedule_turn()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._schedule_turn()
        await fut  # cancellation leaves a done future behind, which _turn skips

    def _schedule_turn(self) -> None:
        if not self._turn_scheduled:
            self._turn_scheduled = True
            asyncio.get_running_loop().call_soon(self._turn)

    def _turn(self) -> None:
        """Runs once per loop turn while anyone was admitted or waits: a fresh quota."""
        self._turn_scheduled = False
        self._used = 0
        while self._waiters and self._used < self.per_turn:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                self._used += 1
        if self._waiters or self._used:
            self._schedule_turn()
