"""A policy whose server is down for half the tasks (imported by path from the CLI tests)."""

from __future__ import annotations

from gymforge.core.errors import InfraError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Observation
from gymforge.rollout.scripted import OraclePolicy


class HalfDown(OraclePolicy):
    name = checkpoint = "half-down"

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.down = derive_seed(ctx.task_id) % 2 == 0

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.down:
            raise InfraError("connection refused (the test's server is down)")
        return await super().act(observation)


def make() -> HalfDown:
    return HalfDown()
