"""A policy for the engine-stops-mid-run test (``--policy engine_stopper:factory``): the
oracle, except that the start of episode ``GF_STOP_AT`` (0: never) stops the container
engine: the flag file ``GF_ENGINE_FLAG`` makes the ``GYMFORGE_DOCKER`` wrapper fail like a
stopped engine, and this process's sandbox containers are removed with the real CLI
``GF_REAL_ENGINE``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.rollout.scripted import OraclePolicy

STARTED = [0]


def stop_engine() -> None:
    Path(os.environ["GF_ENGINE_FLAG"]).touch()
    real = os.environ["GF_REAL_ENGINE"]
    prefix = f"gymforge-sb-{os.getpid()}-"
    names = subprocess.run(
        [real, "ps", "-a", "--filter", f"name={prefix}", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert names, "no sandbox container of this process to stop"
    subprocess.run([real, "rm", "-f", "-t", "0", *names], capture_output=True, timeout=60)


class StoppingOracle(OraclePolicy):
    async def start(self, ctx: EpisodeContext) -> None:
        STARTED[0] += 1
        if STARTED[0] == int(os.environ["GF_STOP_AT"]):
            stop_engine()
        await super().start(ctx)

    async def act(self, observation: Any) -> PolicyTurn:
        return await super().act(observation)


def factory() -> StoppingOracle:
    return StoppingOracle()
