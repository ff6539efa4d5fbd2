"""Reward parts and the potential-based shaping guarantee, checked by brute force."""

from __future__ import annotations

import asyncio
import itertools
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from gymforge.core import Budget, EnvSpec, Reply, Task, ToolCall
from gymforge.kit import ToolEnv
from gymforge.reward import (
    ComposedReward,
    FormatPenalty,
    FormReward,
    LengthPenalty,
    ShapedEnv,
    SparseReward,
    StandardReward,
    StepCosts,
)
from gymforge.tasks import IntKnob, ParamSpace, Split, TaskFamily, TaskSource
from gymforge.tools import tool
from gymforge.verify import Verdict


class LineTruth(BaseModel):
    model_config = ConfigDict(frozen=True)

    length: int


class LineFamily(TaskFamily[LineTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, LineTruth]:
        return "Walk to the end of the line, then say done.", LineTruth(length=params["length"])


class LineEnv(ToolEnv[LineTruth, dict[str, int]]):
    """A tiny MDP: position 0..L on a line; reaching L and replying succeeds."""

    spec = EnvSpec("line", "1.0.0")
    tasks = TaskSource.of(
        [LineFamily("line", 1, {1: ParamSpace({"length": IntKnob(3, 3)})})], Split()
    )
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

    def verify(self, task: Task, world: Any, reply: str) -> Verdict:
        return Verdict(passed=world["pos"] == world["length"])


ACTIONS = [
    ToolCall(name="move", arguments={"delta": 1}),
    ToolCall(name="move", arguments={"delta": -1}),
    Reply(text="done"),
]
TASK = "line/v1/d1/s0"


def episode_return(env: Any, plan: tuple[int, ...]) -> tuple[float, float, bool]:
    """(total reward, shaping part, terminated) of an action index sequence."""

    async def go() -> tuple[float, float, bool]:
        await env.reset(TASK, 0)
        total = shaping = 0.0
        for i in plan:
            r = await env.step(ACTIONS[i])
            total += r.reward
            shaping += r.reward_components.get("shaping", 0.0)
            if r.terminated or r.truncated:
                return total, shaping, r.terminated
        return total, shaping, False

    return asyncio.run(go())


def all_plans() -> list[tuple[int, ...]]:
    """Every action sequence ending in a reply, up to the step budget."""
    return [(*p, 2) for n in range(0, 6) for p in itertools.product((0, 1), repeat=n)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=4, max_size=4))
def test_shaping_never_changes_the_optimal_policy(values: list[float]) -> None:
    phi = dict(enumerate(values))

    def potential(state: dict[str, Any]) -> float:
        return phi[state["pos"]]

    plain, shaped = LineEnv(), ShapedEnv(LineEnv(), potential)
    plans = all_plans()
    base = {p: episode_return(plain, p) for p in plans}
    with_shaping = {p: episode_return(shaped, p) for p in plans}
    for p in plans:
        total, shaping, terminated = with_shaping[p]
        assert terminated
        # the telescoping guarantee: shaping sums to -phi(s0) on every terminating episode
        assert math.isclose(shaping, -phi[0], abs_tol=1e-9)
        assert math.isclose(total, base[p][0] - phi[0], abs_tol=1e-9)
    best = max(v[0] for v in base.values())
    best_shaped = max(v[0] for v in with_shaping.values())
    assert {p for p in plans if math.isclose(base[p][0], best)} == {
        p for p in plans if math.isclose(with_shaping[p][0], best_shaped)
    }


def test_shaping_keeps_potential_on_truncation() -> None:
    shaped = ShapedEnv(LineEnv(), lambda s: float(s["pos"]))
    _, shaping, terminated = episode_return(shaped, (0, 0, 1, 0, 0, 0))
    assert not terminated
    assert shaping == pytest.approx(3.0)  # phi(s_T) - phi(s_0), not zeroed at a budget end


def test_shaping_refuses_bad_potentials_and_gamma() -> None:
    with pytest.raises(ValueError):
        ShapedEnv(LineEnv(), lambda s: 0.0, gamma=0.0)
    env = ShapedEnv(LineEnv(), lambda s: math.nan)
    with pytest.raises(ValueError, match="finite"):
        asyncio.run(env.reset(TASK, 0))


def test_reward_parts_are_named_components() -> None:
    win, miss = Verdict(passed=True), Verdict(passed=False, reason="no_answer")
    assert SparseReward()(None, StepCosts()) == {}
    assert SparseReward()(win, StepCosts()) == {"task": 1.0}
    assert LengthPenalty(-0.01, 10)(None, StepCosts(action_tokens=25)) == {
        "length": pytest.approx(-0.15)
    }
    assert LengthPenalty(-0.01, 10)(None, StepCosts(action_tokens=5)) == {}
    assert FormatPenalty()(miss, StepCosts()) == {"format": -0.1}
    assert FormatPenalty()(Verdict(passed=False, reason="not_equal"), StepCosts()) == {}
    partial = StandardReward(partial_credit=True, step_cost=0.0)
    assert partial(Verdict(passed=False, score=0.25), StepCosts()) == {"task": 0.25}
    both = ComposedReward(StandardReward(), LengthPenalty(-0.01, 0), FormatPenalty())
    out = both(miss, StepCosts(invalid_call=True, action_tokens=3))
    assert out == {
        "step_cost": -0.01,
        "invalid_call": -0.1,
        "task": 0.0,
        "length": pytest.approx(-0.03),
        "format": -0.1,
    }
    with pytest.raises(ValueError, match="both produce"):
        ComposedReward(SparseReward(), StandardReward())(win, StepCosts())


def test_form_reward_reads_form_ok_only_when_a_form_was_demanded() -> None:
    right = Verdict(passed=True, facts={"form": "integer", "form_ok": True})
    unreduced = Verdict(passed=True, facts={"form": "reduced_fraction", "form_ok": False})
    wrong_value = Verdict(passed=False, reason="not_equal", facts={"form_ok": True})
    assert FormReward()(right, StepCosts()) == {"form": 0.0}
    assert FormReward()(unreduced, StepCosts()) == {"form": -0.5}
    assert FormReward(penalty=-1.0)(unreduced, StepCosts()) == {"form": -1.0}
    assert FormReward()(wrong_value, StepCosts()) == {"form": 0.0}  # the value is task's job
    assert FormReward()(Verdict(passed=True), StepCosts()) == {}
    assert FormReward()(None, StepCosts()) == {}
