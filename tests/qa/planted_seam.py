"""Planted environments that QA's seam checks used to judge wrongly (issue 33, "QA on the
seam"): each is correct or broken in exactly one way the old check could not see."""

from __future__ import annotations

import asyncio
from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv

WAIT_S = 0.3
"""How long ``WaitingResetEnv``'s reset waits idle: 15x the ledger's 20 ms reset budget,
and under it once divided by the throughput check's largest slowdown (20x)."""


class WaitingResetEnv(LedgerEnv):
    """The ledger with a reset that waits ``WAIT_S`` doing nothing (a stand-in for a slow
    remote call or a sleep): slow on every machine, however loaded."""

    async def reset(self, task_id: str, seed: int) -> Observation:
        await asyncio.sleep(WAIT_S)
        return await super().reset(task_id, seed)
