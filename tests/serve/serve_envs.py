"""Environments for the server tests: the ledger with one instrumented quirk each."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, ClassVar

from gymforge.core.env import StepResult
from gymforge.core.types import Action, Reply
from gymforge.envs.ledger import LedgerEnv


class CountingEnv(LedgerEnv):
    """Counts live instances (its subclasses' too), so tests can see the server release
    reaped sessions' environments."""

    made: ClassVar[int] = 0
    closed: ClassVar[int] = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        CountingEnv.made += 1

    async def close(self) -> None:
        CountingEnv.closed += 1
        await super().close()

    @classmethod
    def live(cls) -> int:
        return cls.made - cls.closed


class ExplodingEnv(CountingEnv):
    """Raises inside ``step`` on the reply "boom", times a NaN on "nan", hangs on "hang"."""

    async def step(self, action: Action) -> StepResult:
        if isinstance(action, Reply) and action.text == "boom":
            raise RuntimeError("the environment exploded")
        if isinstance(action, Reply) and action.text == "hang":
            await asyncio.sleep(3600)
        result = await super().step(action)
        if isinstance(action, Reply) and action.text == "nan":
            return dataclasses.replace(result, timing={**result.timing, "x": float("nan")})
        return result


class BigStateEnv(CountingEnv):
    """A half-megabyte snapshot: a few unread replies fill the socket buffers."""

    def state(self) -> dict[str, Any]:
        return {**super().state(), "blob": "x" * 2**19}
