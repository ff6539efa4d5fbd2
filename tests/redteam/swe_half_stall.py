"""A scripted ``swe`` policy for ``test_eval_timeout_stall.py`` (loaded by the CLI as
``path/swe_half_stall.py:policy``): the oracle on tasks ``calc-0``, ``calc-2``...; on the odd
ones, commands that only wait (``sleep``, each within ``run_command``'s own time limit) until
the episode is over its ``--episode-timeout``, and nothing else."""

from __future__ import annotations

from gymforge.core.types import Reply, ToolCall
from gymforge.testing.half_oracle import HalfOracle

WAIT = ToolCall(name="run_command", arguments={"command": "sleep 6"})


def policy() -> HalfOracle:
    return HalfOracle("half-stall", lambda n: [WAIT, WAIT, WAIT, Reply(text="Fixed.")])
