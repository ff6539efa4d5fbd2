"""An environment whose reset never finishes in time: the fresh process must kill it."""

from __future__ import annotations

import time

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv


class SlowResetEnv(LedgerEnv):
    async def reset(self, task_id: str, seed: int) -> Observation:
        time.sleep(60)
        return await super().reset(task_id, seed)
