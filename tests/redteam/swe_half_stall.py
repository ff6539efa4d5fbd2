"""A scripted ``swe`` policy for ``test_eval_timeout_stall.py`` (loaded by the CLI as
``path/swe_half_stall.py:policy``): the oracle on tasks ``calc-0``, ``calc-2``...; on the odd
ones, commands that only wait (``sleep``, each within ``run_command``'s own time limit) until
the episode is over its ``--episode-timeout``, and nothing else."""

from __future__ import annotations

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation, Reply, ToolCall
from gymforge.rollout.scripted import OraclePolicy

WAIT = ToolCall(name="run_command", arguments={"command": "sleep 6"})


class HalfStall:
    name = checkpoint = "half-stall"

    def __init__(self) -> None:
        self._oracle = OraclePolicy()
        self._plan: list[Action] | None = None

    async def start(self, ctx: EpisodeContext) -> None:
        if int(ctx.task_id.rsplit("-", 1)[1]) % 2 == 0:
            await self._oracle.start(ctx)
            self._plan = None
        else:
            self._plan = [WAIT, WAIT, WAIT, Reply(text="Fixed.")]

    async def act(self, observation: Observation) -> PolicyTurn:
        if self._plan is None:
            return await self._oracle.act(observation)
        return PolicyTurn(self._plan.pop(0))


def policy() -> HalfStall:
    return HalfStall()
