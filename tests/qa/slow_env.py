"""Environments that misbehave around the fresh process: one hangs, one prints."""

from __future__ import annotations

import os
import time
from pathlib import Path

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


class BusyResetEnv(LedgerEnv):
    """A reset that stays busy (without reading anything) for up to five minutes, leaving
    ``busy-<pid>`` in ``$GYMFORGE_TEST_BUSY_DIR`` first: a QA run on it is mid-run, in
    ``qa`` and in its fresh child, for as long as a test needs."""

    async def reset(self, task_id: str, seed: int) -> Observation:
        mark = Path(os.environ["GYMFORGE_TEST_BUSY_DIR"]) / f"busy-{os.getpid()}"
        mark.write_text(task_id)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            time.sleep(0.05)
        return await super().reset(task_id, seed)
