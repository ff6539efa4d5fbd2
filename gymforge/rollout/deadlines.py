"""Request attempts bounded by a timeout on one timer per event loop and timeout, instead of
one ``asyncio.timeout`` (a timer pushed on the loop's heap and cancelled again) each.

Nearly every attempt ends long before its deadline, yet ``asyncio.timeout`` arms and
disarms a timer for each: 1.3% of a single-turn rollout's instructions
(``benchmarks/rollout_instructions.py``). Attempts under one timeout on one loop reach
their deadlines in the order they started (the loop's clock is monotonic), so one timer,
armed for the oldest attempt still running, serves them all: when it fires it cancels every
attempt past its deadline and is armed again for the next. An attempt that ends early is
only forgotten; the timer, if armed for it, finds it gone when it fires, and when it finds
none left the timeout's entry goes too (a caller passing a new timeout each time leaves
nothing behind). An attempt whose deadline has already passed (a timeout of 0 or less, or
NaN) takes ``asyncio.timeout`` itself: its cancel is queued with ``call_soon`` behind what
was queued before the attempt began, which a timer shared with earlier attempts is not.

:func:`within` keeps ``asyncio.timeout``'s contract (``tests/rollout/test_attempt_deadlines.py``):
the attempt's task is cancelled at the deadline, never before, and that cancellation leaves
as ``TimeoutError`` (its cause the ``CancelledError``); a cancellation from elsewhere,
before the deadline or in the same turn, stays a ``CancelledError``, and an outer
``asyncio.timeout`` that fires first is the outer one's.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class _Attempt:
    __slots__ = ("cancelling", "deadline", "expired", "task")

    def __init__(self, task: asyncio.Task[object], deadline: float) -> None:
        self.task = weakref.ref(task)  # a loop closed with it pending can still die
        self.deadline = deadline
        self.cancelling = task.cancelling()  # cancellations already asked for: not ours
        self.expired = False


class _Deadlines:
    """The attempts running under one timeout on one loop, oldest (first to expire) first.
    It holds no reference to its loop, whose entry in ``_LOOPS`` it is: the loop can die."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.running: dict[int, _Attempt] = {}
        self.started = 0
        self.armed = False  # a timer is armed (not kept: its handle holds the loop)

    def start(
        self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[object], deadline: float
    ) -> tuple[int, _Attempt]:
        attempt = _Attempt(task, deadline)
        key = self.started = self.started + 1
        self.running[key] = attempt
        if not self.armed:
            loop.call_at(attempt.deadline, self._fire)
            self.armed = True
        return key, attempt

    def _fire(self) -> None:
        self.armed = False
        loop = asyncio.get_running_loop()
        now = loop.time()
        running = self.running
        expired: list[int] = []  # one walk: a walk again past each one deleted is quadratic
        for key, attempt in running.items():
            if attempt.deadline > now:
                loop.call_at(attempt.deadline, self._fire)
                self.armed = True
                break
            expired.append(key)
        for key in expired:
            attempt = running.pop(key)
            attempt.expired = True
            task = attempt.task()
            if task is not None:
                task.cancel()
        if not self.armed:  # none left running: this timeout's entry goes
            by_timeout = _LOOPS.get(loop, {})
            if by_timeout.get(self.seconds) is self:
                del by_timeout[self.seconds]


_LOOPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, _Deadlines]]
_LOOPS = weakref.WeakKeyDictionary()


def _deadlines(loop: asyncio.AbstractEventLoop, seconds: float) -> _Deadlines:
    by_timeout = _LOOPS.get(loop)
    if by_timeout is None:
        by_timeout = _LOOPS[loop] = {}
    found = by_timeout.get(seconds)
    if found is None:
        found = by_timeout[seconds] = _Deadlines(seconds)
    return found


async def within(seconds: float | None, send: Callable[[], Awaitable[T]]) -> T:
    """``await send()``, bounded by ``seconds`` as ``async with asyncio.timeout(seconds)``
    bounds it (None: no bound): ``TimeoutError`` once they pass (module docstring)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    now = loop.time()
    deadline = now if seconds is None else now + seconds
    # no bound; outside a task, asyncio.timeout's error; a deadline already passed (or NaN):
    # asyncio.timeout's own timer, queued behind what was queued before this attempt began
    if seconds is None or task is None or not deadline > now:
        async with asyncio.timeout(seconds):
            return await send()
    deadlines = _deadlines(loop, seconds)
    key, attempt = deadlines.start(loop, task, deadline)
    try:
        answer = await send()
    except BaseException as err:  # as asyncio.timeout's exit: our cancel withdrawn, and
        # only a cancellation with none asked from elsewhere is the timeout
        expired = attempt.expired and task.uncancel() <= attempt.cancelling
        if expired and type(err) is asyncio.CancelledError:
            raise TimeoutError from err
        raise
    finally:
        deadlines.running.pop(key, None)
    if attempt.expired:  # it ended otherwise after its deadline: the cancel is withdrawn
        task.uncancel()
    return answer


def running(loop: asyncio.AbstractEventLoop, seconds: float) -> list[_Attempt]:
    """The attempts running on ``loop`` under ``seconds``, oldest first (for tests)."""
    found = _LOOPS.get(loop, {}).get(seconds)
    return [] if found is None else list(found.running.values())
