"""A scripted ``code-agent`` policy for ``test_code_agent_undecodable_name.py`` (loaded by the
CLI as ``path/code_agent_half_sabotage.py:policy``): the oracle on tasks ``add-0``,
``add-2``...; on the odd ones, one ``run_code`` that writes a file whose name is not valid
UTF-8, then a wrong answer."""

from __future__ import annotations

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation, Reply, ToolCall
from gymforge.rollout.scripted import OraclePolicy

SABOTAGE = "open(b'\\xff\\xfe.txt', 'wb').write(b'x')\n"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"


class HalfSabotage:
    name = checkpoint = "half-sabotage"

    def __init__(self) -> None:
        self._oracle = OraclePolicy()
        self._plan: list[Action] | None = None

    async def start(self, ctx: EpisodeContext) -> None:
        if int(ctx.task_id.rsplit("-", 1)[1]) % 2 == 0:
            await self._oracle.start(ctx)
            self._plan = None
        else:
            run = ToolCall(name="run_code", arguments={"code": SABOTAGE})
            self._plan = [run, Reply(text=WRONG)]

    async def act(self, observation: Observation) -> PolicyTurn:
        if self._plan is None:
            return await self._oracle.act(observation)
        return PolicyTurn(self._plan.pop(0))


def policy() -> HalfSabotage:
    return HalfSabotage()
