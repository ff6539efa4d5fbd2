"""``rollout.deadlines.within``: ``asyncio.timeout``'s contract on one timer per loop and
timeout. Every test bounds itself with an outer ``asyncio.timeout`` of its own, so a bound
that never fires fails the test instead of hanging it; no test asserts how long anything
took, only that a deadline never fires early (the loop's clock is monotonic)."""

from __future__ import annotations

import asyncio
import functools
import gc
import weakref

import pytest

from gymforge.rollout import deadlines
from gymforge.rollout.deadlines import within

FOREVER = 60.0  # a test's own bound


async def _never() -> None:
    await asyncio.get_running_loop().create_future()


async def _value(x: int) -> int:
    await asyncio.sleep(0)
    return x


def _run(main: object) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(FOREVER):
            await main  # type: ignore[misc]

    asyncio.run(bounded())


def test_an_attempt_past_its_deadline_is_a_timeout_never_early() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(TimeoutError) as info:
            await within(0.05, _never)
        assert loop.time() >= started + 0.05
        assert isinstance(info.value.__cause__, asyncio.CancelledError)
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    _run(main())


def test_attempts_in_time_return_their_value_and_nothing_stays_held() -> None:
    class Answer:
        pass

    async def main() -> None:
        kept: list[weakref.ref[Answer]] = []

        async def send() -> Answer:
            answer = Answer()
            kept.append(weakref.ref(answer))
            await asyncio.sleep(0)
            return answer

        for _ in range(50):
            assert isinstance(await within(30.0, send), Answer)
        together = (within(30.0, functools.partial(_value, i)) for i in range(20))
        assert await asyncio.gather(*together) == list(range(20))
        gc.collect()
        assert all(ref() is None for ref in kept)
        loop = asyncio.get_running_loop()
        assert not deadlines.running(loop, 30.0)  # every finished attempt forgotten

    _run(main())


def test_each_attempt_expires_at_its_own_deadline_not_the_oldest() -> None:
    async def attempt(loop: asyncio.AbstractEventLoop, delay: float, ends: list[float]) -> None:
        await asyncio.sleep(delay)
        started = loop.time()
        with pytest.raises(TimeoutError):
            await within(0.2, _never)
        assert loop.time() >= started + 0.2
        ends.append(started)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ends: list[float] = []
        await asyncio.gather(*(attempt(loop, d, ends) for d in (0.0, 0.05, 0.1, 0.3)))
        assert len(ends) == 4

    _run(main())


def test_an_attempt_that_finishes_leaves_the_later_ones_bounded() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert await within(0.2, lambda: _value(1)) == 1  # its timer stays armed, unneeded
        await asyncio.sleep(0.05)
        started = loop.time()
        with pytest.raises(TimeoutError):
            await within(0.2, _never)
        assert loop.time() >= started + 0.2

    _run(main())


def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    async def main() -> None:
        task = asyncio.create_task(within(30.0, _never))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not deadlines.running(asyncio.get_running_loop(), 30.0)

    _run(main())


def test_a_cancellation_from_elsewhere_as_the_deadline_fires_stays_a_cancellation() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        # the attempt starts next turn, its deadline then, so its timer fires the turn after;
        # queued in the turn it starts but before it, the cancel runs that turn, first
        loop.call_soon(loop.call_soon, lambda: task.cancel())
        task = asyncio.create_task(within(0.0, _never))
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not deadlines.running(loop, 0.0)

    _run(main())


def test_a_deadline_already_passed_is_a_timeout() -> None:
    async def main() -> None:
        with pytest.raises(TimeoutError):
            await within(0.0, _never)

    _run(main())


def test_an_outer_timeout_that_fires_first_is_the_outer_one() -> None:
    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05) as outer:
                await within(30.0, _never)
        assert outer.expired()
        assert not deadlines.running(asyncio.get_running_loop(), 30.0)

    _run(main())


def test_an_inner_timeout_that_fires_first_is_the_inner_one() -> None:
    async def main() -> None:
        async with asyncio.timeout(30.0) as outer:
            with pytest.raises(TimeoutError):
                await within(0.05, _never)
        assert not outer.expired()

    _run(main())


def test_no_timeout_is_no_bound_and_other_timeouts_keep_their_own_order() -> None:
    async def main() -> None:
        assert await within(None, lambda: _value(3)) == 3
        loop = asyncio.get_running_loop()
        long = asyncio.create_task(within(30.0, _never))
        await asyncio.sleep(0.01)
        started = loop.time()
        with pytest.raises(TimeoutError):  # a shorter timeout begun later still ends first
            await within(0.05, _never)
        assert loop.time() >= started + 0.05 and not long.done()
        long.cancel()
        with pytest.raises(asyncio.CancelledError):
            await long

    _run(main())


def test_a_failing_attempt_raises_its_own_error() -> None:
    async def boom() -> None:
        await asyncio.sleep(0)
        raise ValueError("bad answer")

    async def main() -> None:
        with pytest.raises(ValueError, match="bad answer"):
            await within(30.0, boom)
        assert not deadlines.running(asyncio.get_running_loop(), 30.0)

    _run(main())


def test_each_event_loop_has_its_own_deadlines_and_dies_with_them() -> None:
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []
    for _ in range(3):  # a loop closed and a new one made: the new one's timer is its own

        async def main() -> None:
            loops.append(weakref.ref(asyncio.get_running_loop()))
            assert await within(30.0, lambda: _value(1)) == 1  # its timer left armed
            with pytest.raises(TimeoutError):
                await within(0.02, _never)

        _run(main())
    gc.collect()
    assert [ref() for ref in loops] == [None, None, None]  # the registry holds none alive
