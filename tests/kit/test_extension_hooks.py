"""Environments extend ``ToolEnv`` through hooks, never by overriding ``reset``/``step``.

- No environment class of gymforge (the built-ins, their bases, the adapters' bases)
  overrides ``reset`` or ``step``: the contract's bookkeeping lives in one place.
- ``potential()`` opts into potential-based shaping, whose guarantee is checked by brute
  force on a tiny MDP: over every action sequence, shaping sums to ``-phi(s0)`` on a
  terminating episode, so the best plans are the same with and without it; a budget end
  keeps ``phi(s')``; a bad gamma or a non-finite potential is refused.
- ``extra_reward()`` and ``shape()`` add named components; ``on_reset`` runs before the first
  observation is rendered, ``on_end`` once per finished episode.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import UserError
from gymforge.core.types import Message, Reply, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.kit.tool_env import ToolEnv
from gymforge.registry.resolve import BUILTIN, resolve_factory
from gymforge.reward.standard import StandardReward
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.tools import tool
from gymforge.world.env import WorldToolEnv

ADAPTER_BASES = (
    "gymforge.envs.reasoning_gym.env:ReasoningGymEnv",
    "gymforge.envs.verifiers_adapter.env:VerifiersEnv",
    "gymforge.envs.openenv_adapter.env:OpenEnvEnv",
)


def _environment_classes() -> list[type]:
    classes: list[type] = [ToolEnv, WorldToolEnv]
    for env_id in sorted(BUILTIN):
        factory = resolve_factory(env_id)
        assert isinstance(factory, type), f"{env_id}: the built-in factory is its class"
        classes.append(factory)
    for ref in ADAPTER_BASES:
        module, name = ref.split(":")
        try:
            classes.append(getattr(importlib.import_module(module), name))
        except ImportError:  # the optional framework is not installed here
            continue
    stack = [ToolEnv]
    while stack:  # and every other ToolEnv subclass of gymforge these imports defined
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("gymforge."):
                classes.append(sub)
    return classes


def test_no_environment_class_overrides_reset_or_step() -> None:
    seen: dict[str, type] = {}
    for cls in _environment_classes():
        for base in cls.__mro__:
            if base.__module__.startswith("gymforge.") and base is not ToolEnv:
                seen[f"{base.__module__}.{base.__qualname__}"] = base
    assert len(seen) >= len(BUILTIN) + 1  # the walk reached every built-in and WorldToolEnv
    overriding = sorted(
        f"{name}.{method}"
        for name, base in seen.items()
        for method in ("reset", "step")
        if method in vars(base)
    )
    assert overriding == [], "extend through hooks (on_reset, on_end, extra_reward, potential)"


# ---- a tiny MDP: position 0..3 on a line; reaching 3 and replying succeeds -----------------
class LineTruth(BaseModel):
    length: int


class LineFamily(TaskFamily[LineTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, LineTruth]:
        return "Walk to the end of the line, then say done.", LineTruth(length=params["length"])


FAMILY = LineFamily("line", 1, {1: ParamSpace({"length": IntKnob(3, 3)})})
TASK = FAMILY.task_id(1, 0)


class LineEnv(ToolEnv[LineTruth, dict[str, int]]):
    spec = EnvSpec("line", "1.0.0")
    tasks = TaskSource.of([FAMILY])
    budget = Budget(max_steps=6)
    reward = StandardReward(step_cost=-0.05)

    def init_world(self, task: Task, r: random.Random) -> dict[str, int]:
        return {"pos": 0, "length": self.truth_of(task).length}

    @tool(writes=True)
    def move(self, delta: int) -> int:
        """Move along the line.

        Args:
            delta: +1 or -1.
        """
        self.world["pos"] = max(0, min(self.world["length"], self.world["pos"] + delta))
        return self.world["pos"]

    def verify(self, task: Task, world: dict[str, int], reply: str) -> Verdict:
        return Verdict(passed=world["pos"] == world["length"])


class ShapedLine(LineEnv):
    phi: dict[int, float] = {}
    shaping_gamma = 1.0

    def potential(self) -> float:
        return self.phi[self.world["pos"]]


ACTIONS = [
    ToolCall(name="move", arguments={"delta": 1}),
    ToolCall(name="move", arguments={"delta": -1}),
    Reply(text="done"),
]


def episode_return(env: LineEnv, plan: tuple[int, ...]) -> tuple[float, float, bool]:
    """(total reward, shaping part, terminated) of an action index sequence."""

    async def go() -> tuple[float, float, bool]:
        await env.reset(TASK, 0)
        total = shaping = 0.0
        for i in plan:
            r = await env.step(ACTIONS[i])
            total += r.reward
            shaping += r.reward_components.get("shaping", 0.0)
            if r.done:
                return total, shaping, r.terminated
        return total, shaping, False

    return asyncio.run(go())


def all_plans() -> list[tuple[int, ...]]:
    """Every action sequence ending in a reply, up to the step budget."""
    return [(*p, 2) for n in range(0, 6) for p in itertools.product((0, 1), repeat=n)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=4, max_size=4))
def test_potential_shaping_never_changes_the_optimal_policy(values: list[float]) -> None:
    plain, shaped = LineEnv(), ShapedLine()
    shaped.phi = dict(enumerate(values))
    plans = all_plans()
    base = {p: episode_return(plain, p) for p in plans}
    with_shaping = {p: episode_return(shaped, p) for p in plans}
    for p in plans:
        total, shaping, terminated = with_shaping[p]
        assert terminated
        assert base[p][1] == 0.0  # no potential, no shaping component
        # the telescoping guarantee: shaping sums to -phi(s0) on every terminating episode
        assert math.isclose(shaping, -values[0], abs_tol=1e-9)
        assert math.isclose(total, base[p][0] - values[0], abs_tol=1e-9)
    best = max(v[0] for v in base.values())
    best_shaped = max(v[0] for v in with_shaping.values())
    assert {p for p in plans if math.isclose(base[p][0], best)} == {
        p for p in plans if math.isclose(with_shaping[p][0], best_shaped)
    }


def test_shaping_keeps_the_potential_at_a_budget_end() -> None:
    env = ShapedLine()
    env.phi = {i: float(i) for i in range(4)}
    _, shaping, terminated = episode_return(env, (0, 0, 1, 0, 0, 0))
    assert not terminated
    assert shaping == pytest.approx(3.0)  # phi(s_T) - phi(s_0), not zeroed at a budget end


def test_shaping_refuses_a_bad_gamma_and_a_non_finite_potential() -> None:
    with pytest.raises(UserError, match="shaping_gamma"):

        class Undiscounted(ShapedLine):
            shaping_gamma = 0.0

    env = ShapedLine()
    env.phi = {i: math.nan for i in range(4)}
    with pytest.raises(ValueError, match="finite"):
        asyncio.run(env.reset(TASK, 0))


class Hooked(LineEnv):
    """Records when its hooks run; pays a bonus per move and a process component."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def on_reset(self, task: Task) -> None:
        self.calls.append(f"reset:{len(self.transcript)}")

    async def on_end(self) -> None:
        self.calls.append("end")

    def extra_reward(self) -> dict[str, float]:
        return {"process": -0.25}

    def render_reset(self, task: Task) -> list[Message]:
        self.calls.append("render")
        return super().render_reset(task)

    @tool(writes=True)
    def hop(self) -> int:
        """Move forward and earn a bonus."""
        self.shape("bonus", 0.5)
        return self.move(1)


def test_hooks_add_components_and_bracket_the_episode() -> None:
    env = Hooked()

    async def go() -> list[dict[str, float]]:
        await env.reset(TASK, 0)
        out = []
        for action in (ToolCall(name="hop", arguments={}), Reply(text="done")):
            out.append((await env.step(action)).reward_components)
        return out

    hop, done = asyncio.run(go())
    assert env.calls == ["reset:0", "render", "end"]
    assert hop == {"step_cost": -0.05, "bonus": 0.5, "process": -0.25}
    assert done["process"] == -0.25 and "bonus" not in done
