"""Policies the CLI tests name by path: ``slow`` (the oracle, a pause before each action, so a
run is still going when the test stops it) and ``flaky`` (the oracle, its server down for the
first attempts of every episode: ``FLAKY_FAILURES`` in the environment, default 2)."""

from __future__ import annotations

import asyncio
import os
from collections import Counter

from gymforge.core.errors import InfraError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation
from gymforge.rollout.scripted import OraclePolicy


class Slow(OraclePolicy):
    name = checkpoint = "slow-oracle"

    async def act(self, observation: Observation) -> PolicyTurn:
        await asyncio.sleep(0.2)
        return await super().act(observation)


class Flaky(OraclePolicy):
    name = checkpoint = "flaky-oracle"
    attempts: Counter[tuple[str, int, int]] = Counter()

    async def start(self, ctx: EpisodeContext) -> None:
        key = (ctx.task_id, ctx.seed, ctx.rollout)
        Flaky.attempts[key] += 1
        if Flaky.attempts[key] <= int(os.environ.get("FLAKY_FAILURES", "2")):
            raise InfraError("connection refused (the test's policy server is down)")
        await super().start(ctx)


def slow() -> Slow:
    return Slow()


def flaky() -> Flaky:
    return Flaky()
