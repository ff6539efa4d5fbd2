"""Policies the CLI tests name by path (``FILE:factory``):

- ``slow``: the oracle, pausing ``$SLOW_PAUSE_S`` (default 0.2 s) before each action, so a
  run is still going when a test stops it (a test resuming the stopped run sets it to 0);
- ``flaky``: the oracle behind a policy server that is down for the first
  ``$FLAKY_FAILURES`` attempts of every episode (default 2), an injected transient failure;
- ``cannot_play``: raises a ``UserError`` at the start of every episode (a policy that can
  never play the task), counting its starts in ``$CANNOT_PLAY_COUNT`` (a file).

Attempts are counted per ``$FLAKY_TAG`` so that the tests sharing this process (CliRunner)
do not see each other's counts."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from pathlib import Path

from gymforge.core.errors import InfraError, UserError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation
from gymforge.rollout.scripted import OraclePolicy


class Slow(OraclePolicy):
    name = checkpoint = "slow-oracle"

    async def act(self, observation: Observation) -> PolicyTurn:
        await asyncio.sleep(float(os.environ.get("SLOW_PAUSE_S", "0.2")))
        return await super().act(observation)


class Flaky(OraclePolicy):
    name = checkpoint = "flaky-oracle"
    attempts: Counter[tuple[str, str, int, int]] = Counter()

    async def start(self, ctx: EpisodeContext) -> None:
        key = (os.environ.get("FLAKY_TAG", ""), ctx.task_id, ctx.seed, ctx.rollout)
        Flaky.attempts[key] += 1
        if Flaky.attempts[key] <= int(os.environ.get("FLAKY_FAILURES", "2")):
            raise InfraError("connection refused (the test's policy server is down)")
        await super().start(ctx)


class CannotPlay(OraclePolicy):
    name = checkpoint = "cannot-play"

    async def start(self, ctx: EpisodeContext) -> None:
        count = Path(os.environ["CANNOT_PLAY_COUNT"])
        count.write_text(str(int(count.read_text() or "0") + 1) if count.exists() else "1")
        raise UserError(f"this policy cannot play {ctx.task_id}: use another --policy")


def slow() -> Slow:
    return Slow()


def flaky() -> Flaky:
    return Flaky()


def cannot_play() -> CannotPlay:
    return CannotPlay()
