"""A scripted policy for attacks on counting: the oracle on half the tasks, a fixed plan on
the other half. Tasks are told apart by the number their id ends in (``calc-4``, ``add-3``):
even numbers get the oracle, odd ones ``plan(n)``. An honest run of it scores 50%; an attack
that turns the planned failures into anything but counted failures shows as more."""

from __future__ import annotations

from collections.abc import Callable

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation
from gymforge.rollout.scripted import OraclePolicy


class HalfOracle:
    """The oracle where the task id's number is even, ``plan(n)`` (played in order) where it
    is odd."""

    scripted = True

    def __init__(self, name: str, plan: Callable[[int], list[Action]]) -> None:
        self.name = self.checkpoint = name
        self._build = plan
        self._oracle = OraclePolicy()
        self._plan: list[Action] | None = None

    async def start(self, ctx: EpisodeContext) -> None:
        n = int(ctx.task_id.rsplit("-", 1)[1])
        if n % 2 == 0:
            await self._oracle.start(ctx)
            self._plan = None
        else:
            self._plan = list(self._build(n))

    async def act(self, observation: Observation) -> PolicyTurn:
        if self._plan is None:
            return await self._oracle.act(observation)
        return PolicyTurn(self._plan.pop(0))
