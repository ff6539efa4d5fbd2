"""``ToolEnv.random_world = False``: an environment whose world draws nothing is handed a
stream that refuses every draw instead of a freshly seeded one, and plays the same."""

from __future__ import annotations

import asyncio
import copy
import pickle
import random
from typing import Any

import pytest

from gymforge.core.seeding import NO_DRAWS
from gymforge.core.types import Reply, Task
from gymforge.envs.math.env import MathEnv
from gymforge.kit.tool_env import ToolEnv
from tests.kit.test_extension_hooks import TASK, LineEnv


class _SeededMath(MathEnv):
    random_world = True


def _play(env: ToolEnv[Any, Any], task_id: str, seed: int) -> tuple[Any, ...]:
    async def go() -> tuple[Any, ...]:
        obs = await env.reset(task_id, seed)
        result = await env.step(Reply(text="\\boxed{7}"))
        return obs, env.world, await env.snapshot(), result.reward, result.info

    return asyncio.run(go())


def test_math_declares_no_world_draws_and_plays_as_with_a_seeded_stream() -> None:
    assert MathEnv.random_world is False
    for task_id in MathEnv.tasks.sample(12, 4):
        assert _play(MathEnv(), task_id, 3) == _play(_SeededMath(), task_id, 3)


@pytest.mark.parametrize(
    "use",
    [
        lambda r: r.random(),
        lambda r: r.getrandbits(8),
        lambda r: r.randrange(10),
        lambda r: r.choice([1, 2]),
        lambda r: r.shuffle([1, 2, 3]),
        lambda r: r.sample(range(5), 2),
        lambda r: r.uniform(0, 1),
        lambda r: r.gauss(0, 1),
        lambda r: r.randbytes(4),
        lambda r: r.getstate(),
        lambda r: copy.deepcopy(r),
        lambda r: pickle.dumps(r),
    ],
)
def test_the_no_draws_stream_refuses_every_draw_and_its_state(use: Any) -> None:
    with pytest.raises(RuntimeError, match="random_world"):
        use(NO_DRAWS)


def test_an_environment_that_declares_no_draws_yet_draws_fails_loudly() -> None:
    class Drawing(LineEnv):
        random_world = False

        def init_world(self, task: Task, r: random.Random) -> dict[str, int]:
            return {"pos": r.randrange(2), "length": 3}

    with pytest.raises(RuntimeError, match="random_world"):
        asyncio.run(Drawing().reset(TASK, 0))
