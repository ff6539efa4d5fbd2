"""Environments that misbehave around the fresh process: one hangs, one prints."""

from __future__ import annotations

import os
import time

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv


class SlowResetEnv(LedgerEnv):
    async def reset(self, task_id: str, seed: int) -> Observation:
        time.sleep(60)
        return await super().reset(task_id, seed)


class ChattyEnv(LedgerEnv):
    """Prints on every reset, from Python and from C: the fresh process must not mind."""

    async def reset(self, task_id: str, seed: int) -> Observation:
        print("resetting", task_id)
        os.system("echo from a subprocess")  # writes to the inherited fd 1
        return await super().reset(task_id, seed)
