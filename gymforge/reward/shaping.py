"""Potential-based shaping (Ng, Harada and Russell, 1999), as its own reward component.

``ShapedEnv(env, potential, gamma)`` adds ``shaping = gamma * phi(s') - phi(s)`` to every
step, where ``phi`` is a function of the world state (``snapshot()``), e.g. the fraction of
subgoals done. On a *terminal* step ``phi(s')`` is taken as 0.

The guarantee: for any episode that terminates at step T, the shaping components sum to
``sum_t gamma^t F_t`` = ``-phi(s_0)`` (discounted), which depends only on the start state.
Every policy's return shifts by the same constant, so the optimal policy — and the ranking
of any two policies from the same start — is unchanged. Shaping can only speed learning up;
it cannot be farmed (looping through high-potential states pays back what it collected).

Truncated steps keep ``phi(s')``: a budget end is not a terminal state, and zeroing it would
change the optimal policy near the budget. Replay needs the same wrapper (pass a factory
that builds it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gymforge.core.env import Environment, EnvSpec, StepResult
from gymforge.core.types import Action, Observation, State

Potential = Callable[[State], float]


class ShapedEnv:
    """Wraps any environment; everything but the reward passes through unchanged."""

    def __init__(
        self, env: Environment, potential: Potential, gamma: float = 1.0, component: str = "shaping"
    ) -> None:
        if not 0 < gamma <= 1:
            raise ValueError("gamma must be in (0, 1]")
        self.env, self.potential, self.gamma, self.component = env, potential, gamma, component
        self.spec: EnvSpec = env.spec
        self._phi = 0.0

    def __getattr__(self, name: str) -> Any:  # oracle_action, tasks, qa... of the inner env
        return getattr(self.env, name)

    async def reset(self, task_id: str, seed: int) -> Observation:
        obs = await self.env.reset(task_id, seed)
        self._phi = self._potential(await self.env.snapshot())
        return obs

    async def step(self, action: Action) -> StepResult:
        result = await self.env.step(action)
        phi_next = 0.0 if result.terminated else self._potential(await self.env.snapshot())
        shaping = self.gamma * phi_next - self._phi
        self._phi = phi_next
        if self.component in result.reward_components:
            raise ValueError(f"the environment already has a {self.component!r} component")
        components = {**result.reward_components, self.component: shaping}
        return StepResult.make(
            result.observation,
            components,
            terminated=result.terminated,
            truncated=result.truncated,
            info=result.info,
            timing=result.timing,
        )

    async def snapshot(self) -> State:
        return await self.env.snapshot()

    async def close(self) -> None:
        await self.env.close()

    def _potential(self, state: State) -> float:
        value = float(self.potential(state))
        if not math.isfinite(value):
            raise ValueError(f"potential returned {value}; it must be finite")
        return value
