"""An environment that declares ``random_world = False`` (its world draws nothing) and draws
anyway, through the generator's own methods called on the stream it is handed
(``random.Random.random(r)``, ``random.Random.getstate(r)``): the stream refused every draw
made through its own methods, but it is one object for the whole process, a seeded
generator underneath, so such a draw came from a stream that every episode before it had
advanced (a world depending on which episodes the process ran first: other worlds on a
replay, or on another worker) instead of failing loudly. The attack holds when every draw
fails."""

from __future__ import annotations

import _random
import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core.types import Task
from tests.kit.test_extension_hooks import TASK, LineEnv

_UNBOUND: dict[str, Callable[[random.Random], Any]] = {
    "Random.random": lambda r: random.Random.random(r),
    "Random.getrandbits": lambda r: random.Random.getrandbits(r, 8),
    "Random.getstate": lambda r: random.Random.getstate(r),
    "_random.Random.random": lambda r: _random.Random.random(r),
    "_random.Random.getstate": lambda r: _random.Random.getstate(r),
    "Random.randrange": lambda r: random.Random.randrange(r, 10),
}


@pytest.mark.parametrize("name", sorted(_UNBOUND))
def test_a_world_declared_drawless_cannot_draw_through_the_generator_itself(name: str) -> None:
    draw = _UNBOUND[name]

    class Drawing(LineEnv):
        random_world = False

        def init_world(self, task: Task, r: random.Random) -> dict[str, int]:
            return {"pos": 0 if draw(r) is None else 1, "length": 3}

    with pytest.raises((RuntimeError, TypeError)):
        asyncio.run(Drawing().reset(TASK, 0))
