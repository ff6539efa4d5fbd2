"""Admission pacing: a burst of episode starts is spread over loop turns, in arrival order,
and whatever else was ready (steps of episodes in flight) runs in between."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.rollout.admission import AdmissionGate


class Turns:
    """Counts event-loop turns: a callback that reschedules itself once per turn."""

    def __init__(self) -> None:
        self.n = 0
        self.running = True
        asyncio.get_running_loop().call_soon(self.tick)

    def tick(self) -> None:
        self.n += 1
        if self.running:
            asyncio.get_running_loop().call_soon(self.tick)


def test_a_burst_is_spread_over_turns_in_arrival_order() -> None:
    async def go() -> None:
        gate, turns = AdmissionGate(per_turn=2), Turns()
        admitted: list[tuple[int, int]] = []

        async def episode(i: int) -> None:
            await gate.enter()
            admitted.append((i, turns.n))

        await asyncio.gather(*(episode(i) for i in range(7)))
        turns.running = False
        assert [i for i, _ in admitted] == list(range(7))  # first come, first served
        per_turn: dict[int, int] = {}
        for _, t in admitted:
            per_turn[t] = per_turn.get(t, 0) + 1
        assert max(per_turn.values()) <= 2 and len(per_turn) >= 4

    asyncio.run(go())


def test_work_already_ready_runs_before_the_rest_of_a_burst() -> None:
    async def go() -> None:
        gate = AdmissionGate(per_turn=1)
        order: list[str] = []

        async def episode(i: int) -> None:
            await gate.enter()
            order.append(f"start {i}")
            if i == 0:  # an episode in flight gets its answer while the burst is admitted
                asyncio.get_running_loop().call_soon(order.append, "step of 0")

        await asyncio.gather(*(episode(i) for i in range(4)))
        assert order.index("step of 0") < order.index("start 3")

    asyncio.run(go())


def test_no_wait_below_the_quota_and_cancelled_waiters_free_their_place() -> None:
    async def go() -> None:
        gate = AdmissionGate(per_turn=3)
        for _ in range(3):  # enter() returns at once: no await happens
            coro = gate.enter()
            with pytest.raises(StopIteration):
                coro.send(None)
        waiting = [asyncio.ensure_future(gate.enter()) for _ in range(3)]
        await asyncio.sleep(0)
        waiting[0].cancel()
        await asyncio.wait_for(asyncio.gather(*waiting[1:]), 1.0)
        assert all(w.done() for w in waiting)

    asyncio.run(go())
    with pytest.raises(ValueError):
        AdmissionGate(per_turn=0)
