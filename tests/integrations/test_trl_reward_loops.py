"""``GymforgeReward`` pools environments per event loop, and never hands one loop's to
another. The pools were keyed by ``id(loop)``: a loop that ended (a caller grading each
batch with ``asyncio.run``) left its pool behind, and CPython gives a new loop the freed
loop's address, hence its id, more often than not, so the next loop was handed the old
loop's environments, with whatever they had bound to the loop that made them. The reuse of
an id is forced here (``id`` answers one number for every loop), so the test does not
depend on where the allocator puts the next loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.envs.digits import DigitsEnv
from gymforge.integrations import trl
from gymforge.integrations.trl import GymforgeReward

TASKS = list(DigitsEnv.tasks.sample(2, 0, "train"))


class LoopBound(DigitsEnv):
    """Remembers the loop of its first reset, as an environment holding a client, a lock
    or a queue of that loop does; records any reset in another loop."""

    crossed: list[str] = []

    def __init__(self) -> None:
        super().__init__()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def reset(self, task_id: str, seed: int) -> Any:
        loop = asyncio.get_running_loop()
        if self.loop is not None and self.loop is not loop:
            LoopBound.crossed.append(task_id)
        self.loop = loop
        return await super().reset(task_id, seed)


def test_each_event_loop_gets_environments_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trl, "id", lambda obj: 1, raising=False)  # every loop one id
    LoopBound.crossed = []
    reward = GymforgeReward(LoopBound, concurrency=2)

    async def batch() -> list[float | None]:
        return await reward([""] * 2, ["1", "2"], None, task_id=TASKS, seed=[3, 3])

    for _ in range(3):  # a new loop each time, as a caller with asyncio.run per batch
        assert len(asyncio.run(batch())) == 2
    assert LoopBound.crossed == []
