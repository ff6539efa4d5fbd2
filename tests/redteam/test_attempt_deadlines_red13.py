"""Red team for ``rollout.deadlines.within``: is it ``asyncio.timeout``'s exact contract?

Most attacks run on a loop with a virtual clock (its selector advances the clock by the
timeout the loop asks to sleep, instead of sleeping), so every schedule is deterministic and
no test depends on wall-clock speed; every run is bounded by its own outer timeout, and the
virtual loop refuses to idle with nothing scheduled or to turn without end, so a hang fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import random
import selectors
import threading
import types
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import pytest
import uvloop
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gymforge.rollout import deadlines
from gymforge.rollout.deadlines import within
from gymforge.rollout.server import PolicyServerError, ServerFactory, call_with_retries
from gymforge.rollout.server_settings import Retry

T = TypeVar("T")
FOREVER = 60.0  # a real-time test's own bound
VIRTUAL_FOREVER = 100_000.0  # a virtual-time test's own bound

Bound = Callable[[float | None, Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def _by_asyncio(seconds: float | None, send: Callable[[], Awaitable[Any]]) -> Any:
    async with asyncio.timeout(seconds):
        return await send()


BOUNDS: dict[str, Bound] = {"within": within, "asyncio.timeout": _by_asyncio}


# --- a loop on a virtual clock --------------------------------------------------------------


class _VirtualSelector(selectors.SelectSelector):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.turns = 0

    def select(self, timeout: float | None = None) -> list[Any]:
        self.turns += 1
        if self.turns > 200_000:
            raise AssertionError("the loop turns without end")
        if timeout is None:
            raise AssertionError("the loop idles with nothing scheduled: a hang")
        if timeout > 0:
            self.now += timeout
        return super().select(0)


class _VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self.clock = _VirtualSelector()
        super().__init__(self.clock)

    def time(self) -> float:
        return self.clock.now


def _run_virtual(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    loop = _VirtualLoop()

    async def bounded() -> T:
        async with asyncio.timeout(VIRTUAL_FOREVER):
            return await main()

    try:
        return loop.run_until_complete(bounded())
    finally:
        loop.close()


def _run(main: Callable[[], Coroutine[Any, Any, T]], *, uv: bool = False) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(FOREVER):
            return await main()

    return uvloop.run(bounded()) if uv else asyncio.run(bounded())


async def _never() -> None:
    await asyncio.get_running_loop().create_future()


async def _one_turn() -> str:
    await asyncio.sleep(0)
    return "value"


def _outcome(bound: Bound, seconds: float, send: Callable[[], Awaitable[Any]]) -> str:
    async def main() -> str:
        cap = asyncio.timeout(1_000.0)  # a bound that never fires at all is capped here
        try:
            async with cap:
                return f"value {await bound(seconds, send)}"
        except TimeoutError as err:
            assert isinstance(err.__cause__, asyncio.CancelledError)
            return "capped" if cap.expired() else "timeout"

    return _run_virtual(main)


# --- defects --------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [0.0, -1.0])
def test_a_deadline_already_past_cancels_before_what_the_attempt_queued(seconds: float) -> None:
    # asyncio.timeout with its deadline passed schedules its cancel with call_soon: it runs
    # before anything the attempt queues after it. A timer on the loop's heap runs after.
    assert _outcome(_by_asyncio, seconds, _one_turn) == "timeout"
    assert _outcome(within, seconds, _one_turn) == "timeout"


def test_distinct_timeouts_do_not_accumulate_on_a_long_lived_loop() -> None:
    # a caller bounding each attempt by what is left of a budget passes a new value each
    # time; every value kept its own entry for as long as the loop lived
    async def main() -> None:
        loop = asyncio.get_running_loop()
        for i in range(300):
            assert await within(1.0 + i / 8, _one_turn) == "value"
        await asyncio.sleep(1_000.0)  # every timer armed has fired by now
        assert len(deadlines._LOOPS.get(loop, {})) <= 1

    _run_virtual(main)


class _CountingDict(dict[int, Any]):
    """``running``, counting each walk from its front (a walk after deleting the front
    skips every slot deleted before it: one per expired attempt is quadratic)."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()

    def items(self) -> Any:
        type(self).walks += 1
        return super().items()

    def keys(self) -> Any:
        type(self).walks += 1
        return super().keys()

    def values(self) -> Any:
        type(self).walks += 1
        return super().values()


def test_many_attempts_expiring_together_are_one_walk_not_one_each() -> None:
    # 40 000 attempts that time out together stalled the loop ~0.6 s in one _fire call
    async def main() -> None:
        loop = asyncio.get_running_loop()
        first = asyncio.create_task(within(5.0, _never))
        await asyncio.sleep(0)
        table = deadlines._LOOPS[loop][5.0]
        counting = _CountingDict(table.running)
        table.running = counting
        rest = [asyncio.create_task(within(5.0, _never)) for _ in range(2_000)]
        await asyncio.sleep(0)
        _CountingDict.walks = 0
        outcomes = await asyncio.gather(first, *rest, return_exceptions=True)
        assert all(isinstance(o, TimeoutError) for o in outcomes)
        assert _CountingDict.walks <= 4

    _run_virtual(main)


def test_a_bound_the_loop_refuses_leaves_no_attempt_behind() -> None:
    # uvloop refuses a NaN deadline (so does asyncio.timeout on it); the attempt, already
    # entered before the timer was armed, stayed in the table for good, once per call
    nan = float("nan")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for bound in (_by_asyncio, within):
            for _ in range(3):
                with pytest.raises(ValueError):
                    await bound(nan, _never)
        assert deadlines.running(loop, nan) == []

    _run(main, uv=True)


# --- the differential property --------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    start: int  # virtual seconds
    seconds: float  # the bound under test
    send: tuple[str, float]  # ("turns", n) | ("at", t after start) | ("never", 0)
    # (an answer or a cancel at 1.0 or 2.0 lands in the turn a deadline fires)
    on_cancel: str  # what send does with a CancelledError: raise | swallow | error
    cancels: tuple[tuple[str, float], ...]  # external: ("at", t after start) | ("turns", n)
    shape: str  # plain | in-timeout | around-timeout | nested-same | nested
    other: float  # the other bound's seconds (shapes but plain)
    owed: bool  # a cancellation asked and swallowed before the bound is entered


plans = st.builds(
    Plan,
    start=st.integers(0, 3),
    seconds=st.sampled_from([-1.0, 0.0, 1.0, 2.0]),
    send=st.one_of(
        st.tuples(st.just("turns"), st.integers(0, 3).map(float)),
        st.tuples(st.just("at"), st.sampled_from([0.25, 1.0, 1.25, 2.0, 2.75])),
        st.just(("never", 0.0)),
    ),
    on_cancel=st.sampled_from(["raise", "swallow", "error"]),
    cancels=st.lists(
        st.one_of(
            st.tuples(st.just("at"), st.sampled_from([0.5, 1.0, 1.5, 2.0, 2.5])),
            st.tuples(st.just("turns"), st.integers(0, 2).map(float)),
        ),
        max_size=2,
    ).map(tuple),
    shape=st.sampled_from(["plain", "in-timeout", "around-timeout", "nested-same", "nested"]),
    other=st.sampled_from([0.0, 1.0, 1.5, 3.0]),
    owed=st.booleans(),
)


async def _attempt(bound: Bound, plan: Plan) -> tuple[object, ...]:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    await asyncio.sleep(plan.start)
    began = loop.time()
    if plan.owed:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)
    for kind, when in plan.cancels:
        if kind == "at":
            loop.call_at(began + when, task.cancel)
        else:

            def later(n: int) -> None:
                if n:
                    loop.call_soon(later, n - 1)
                else:
                    task.cancel()

            loop.call_soon(later, int(when))

    async def send() -> str:
        try:
            kind, n = plan.send
            if kind == "turns":
                for _ in range(int(n)):
                    await asyncio.sleep(0)
                return "value"
            if kind == "at":
                answer: asyncio.Future[str] = loop.create_future()

                def resolve() -> None:
                    if not answer.done():
                        answer.set_result("value")

                loop.call_at(began + n, resolve)
                return await answer
            await _never()
            return "unreachable"
        except asyncio.CancelledError:
            if plan.on_cancel == "raise":
                raise
            if plan.on_cancel == "swallow":
                return "swallowed"
            raise ValueError("after the cancel") from None

    outer: list[asyncio.Timeout] = []

    async def in_timeout() -> Any:
        async with asyncio.timeout(plan.other) as cm:
            outer.append(cm)
            return await bound(plan.seconds, send)

    async def around_timeout() -> Any:
        async def inner() -> Any:
            async with asyncio.timeout(plan.other) as cm:
                outer.append(cm)
                return await send()

        return await bound(plan.seconds, inner)

    shapes: dict[str, Callable[[], Awaitable[Any]]] = {
        "plain": lambda: bound(plan.seconds, send),
        "in-timeout": in_timeout,
        "around-timeout": around_timeout,
        "nested-same": lambda: bound(plan.seconds, lambda: bound(plan.seconds, send)),
        "nested": lambda: bound(plan.other, lambda: bound(plan.seconds, send)),
    }
    try:
        result: tuple[object, ...] = ("value", await shapes[plan.shape]())
    except TimeoutError as err:
        assert isinstance(err.__cause__, asyncio.CancelledError)
        result = ("timeout",)
    except asyncio.CancelledError:
        result = ("cancelled",)
    except ValueError:
        result = ("error",)
    expired = [cm.expired() for cm in outer]
    return (*result, task.cancelling(), expired, loop.time() - began)


def _schedule(bound: Bound, schedule: list[Plan]) -> list[tuple[object, ...]]:
    async def main() -> list[tuple[object, ...]]:
        tasks = [asyncio.create_task(_attempt(bound, plan)) for plan in schedule]
        results = await asyncio.gather(*tasks)
        await asyncio.sleep(10.0)  # every timer armed fires, on nothing
        return results

    return _run_virtual(main)


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(st.lists(plans, min_size=1, max_size=4))
@example([Plan(0, 0.0, ("turns", 1.0), "raise", (), "plain", 0.0, False)])
def test_within_and_asyncio_timeout_agree_on_every_schedule(schedule: list[Plan]) -> None:
    assert _schedule(within, schedule) == _schedule(_by_asyncio, schedule)


# --- attacks that found the contract kept ----------------------------------------------------


@pytest.mark.parametrize("bound", BOUNDS.values(), ids=BOUNDS.keys())
@pytest.mark.parametrize("offset", [-(2.0**-40), 2.0**-40], ids=["before", "after"])
def test_a_cancel_in_the_turn_the_deadline_fires_stays_a_cancellation(
    bound: Bound, offset: float
) -> None:
    # the virtual loop wakes at the first of the two, and both are due within its clock's
    # resolution: one turn runs both, the cancel first or the timer first (a timer a turn
    # earlier would have woken the attempt before the cancel: a TimeoutError)
    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert await within(1.0, _one_turn) == "value"  # a shared timer armed, not needed
        task: asyncio.Task[Any] = asyncio.ensure_future(bound(1.0, _never))
        await asyncio.sleep(0)
        seen: list[int] = []

        def cancel() -> None:
            seen.append(task.cancelling())  # 1: the timer ran first
            task.cancel()

        loop.call_at(loop.time() + 1.0 + offset, cancel)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == [0 if offset < 0 else 1] and task.cancelling() == 1

    _run_virtual(main)


def test_a_timer_armed_for_a_finished_attempt_bounds_the_next_at_its_own_deadline() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert await within(4.0, _one_turn) == "value"  # a timer armed for 4.0, not needed
        await asyncio.sleep(1.5)
        with pytest.raises(TimeoutError):
            await within(4.0, _never)
        assert loop.time() == 5.5  # not at 4.0, not late: at its own deadline exactly

    _run_virtual(main)


def test_finished_attempts_free_everything_while_an_old_one_hangs() -> None:
    class Answer:
        pass

    async def main() -> None:
        loop = asyncio.get_running_loop()
        kept: list[weakref.ref[Answer]] = []
        done: list[weakref.ref[asyncio.Task[Any]]] = []

        async def send() -> Answer:
            answer = Answer()
            kept.append(weakref.ref(answer))
            await asyncio.sleep(0)
            return answer

        old = asyncio.create_task(within(100.0, _never))
        await asyncio.sleep(1.0)
        for _ in range(20):
            batch = [asyncio.create_task(within(100.0, send)) for _ in range(100)]
            done.extend(weakref.ref(t) for t in batch)
            answers = await asyncio.gather(*batch)
            assert len(answers) == 100 and isinstance(answers[-1], Answer)
            del batch, answers
        await asyncio.sleep(0)  # the loop's handle that woke this step holds the last gather
        gc.collect()
        assert all(ref() is None for ref in kept) and all(ref() is None for ref in done)
        assert len(deadlines.running(loop, 100.0)) == 1  # the old one only
        with pytest.raises(TimeoutError):
            await old
        assert loop.time() == 100.0

    _run_virtual(main)


@pytest.mark.parametrize("seconds", [math.inf, 1e308])
def test_an_unreachable_deadline_never_fires_and_is_still_cancellable(seconds: float) -> None:
    async def main() -> None:
        assert await within(seconds, _one_turn) == "value"
        task = asyncio.create_task(within(seconds, _never))
        await asyncio.sleep(50_000.0)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    _run_virtual(main)


@pytest.mark.parametrize(("seconds", "never"), [(1e-300, "timeout"), (float("nan"), "capped")])
def test_a_tiny_or_nan_bound_ends_as_asyncio_timeouts_does(seconds: float, never: str) -> None:
    # NaN: both push a timer at NaN on the loop's heap, which then fires after every other
    for send, outcome in ((_one_turn, "value value"), (_never, never)):
        assert _outcome(within, seconds, send) == _outcome(_by_asyncio, seconds, send) == outcome


def test_a_loop_closed_with_attempts_pending_is_freed_with_them() -> None:
    loop = asyncio.new_event_loop()
    tasks = [loop.create_task(within(s, _never)) for s in (30.0, 30.0, 0.5)]
    loop.run_until_complete(asyncio.sleep(0))
    refs = [weakref.ref(t) for t in tasks]
    loop_ref = weakref.ref(loop)
    loop.close()  # the attempts never cancelled, their timers never fired
    del tasks, loop
    gc.collect()
    assert loop_ref() is None and all(ref() is None for ref in refs)


def test_loops_in_many_threads_at_once_keep_their_own_deadlines() -> None:
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def work() -> None:
        loop = asyncio.get_running_loop()
        loops.append(weakref.ref(loop))
        barrier.wait(timeout=FOREVER)

        async def timed_out() -> None:
            started = loop.time()
            with pytest.raises(TimeoutError):
                await within(0.05, _never)
            assert loop.time() >= started + 0.05

        jobs: list[Awaitable[object]] = [timed_out() for _ in range(100)]
        jobs += [within(0.05, _one_turn) for _ in range(100)]
        await asyncio.gather(*jobs)
        assert deadlines.running(loop, 0.05) == []
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    def thread(uv: bool) -> None:
        try:
            _run(work, uv=uv)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=thread, args=(i % 2 == 1,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(FOREVER)
    assert not errors, errors
    gc.collect()
    assert len(loops) == 4 and all(ref() is None for ref in loops)


def test_uvloop_agrees_with_asyncio_timeout_on_the_basic_outcomes() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        for bound in (within, _by_asyncio):
            assert await bound(0.05, _one_turn) == "value"
            started = loop.time()
            with pytest.raises(TimeoutError):
                await bound(0.05, _never)
            assert loop.time() >= started + 0.05 or bound is _by_asyncio
            task = asyncio.create_task(bound(30.0, _never))
            await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        assert deadlines.running(loop, 0.05) == deadlines.running(loop, 30.0) == []

    _run(main, uv=True)


# --- the retry loop around it ---------------------------------------------------------------


def _factory(max_attempts: int = 3) -> ServerFactory:
    retry = Retry(max_attempts=max_attempts, base_delay=1.0, max_delay=1.0, call_timeout=5.0)
    stub = types.SimpleNamespace(
        retry=retry, base_url="http://policy", current_weight_version=lambda: "w1"
    )
    return cast(ServerFactory, stub)


def test_a_timed_out_attempt_is_retried_and_the_retry_answers() -> None:
    async def main() -> None:
        calls: list[float] = []
        loop = asyncio.get_running_loop()

        async def send() -> str:
            calls.append(loop.time())
            if len(calls) == 1:
                await _never()
            return "answer"

        assert await call_with_retries(_factory(), random.Random(0), send) == ("answer", "w1")
        assert len(calls) == 2 and calls[1] >= 5.0
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    _run_virtual(main)


def test_a_server_that_never_answers_fails_after_max_attempts() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(PolicyServerError, match=r"failed 3 attempts.*within 5\.0 s"):
            await call_with_retries(_factory(), random.Random(0), _never)
        assert loop.time() >= 15.0

    _run_virtual(main)


@pytest.mark.parametrize("when", ["mid-attempt", "at-deadline", "in-backoff"])
def test_a_cancelled_run_stops_and_is_not_retried(when: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        calls: list[float] = []

        async def send() -> None:
            calls.append(loop.time())
            await _never()

        run = asyncio.create_task(call_with_retries(_factory(), random.Random(0), send))
        at = {"mid-attempt": 2.0, "at-deadline": 5.0, "in-backoff": 5.25}[when]
        loop.call_at(at, run.cancel)
        with pytest.raises(asyncio.CancelledError):
            await run
        assert len(calls) == 1 and run.cancelling() == 1
        await asyncio.sleep(100.0)
        assert len(calls) == 1  # nothing left running

    _run_virtual(main)
