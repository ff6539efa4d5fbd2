"""Planted environments that QA's seam checks used to judge wrongly (issue 33, "QA on the
seam"): each is correct or broken in exactly one way the old check could not see."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.core import Budget, EnvSpec, Reply, Task, ToolCall
from gymforge.core.errors import ToolError
from gymforge.core.types import Action, Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import World
from gymforge.kit import ToolEnv
from gymforge.qa import QAProfile
from gymforge.reward.compose import ComposedReward
from gymforge.reward.standard import StandardReward, StepCosts
from gymforge.tasks import IntKnob, ParamSpace, Split, TaskFamily, TaskSource
from gymforge.tools import tool
from gymforge.verify import Verdict

WAIT_S = 0.3
"""How long ``WaitingResetEnv``'s reset waits idle: 15x the ledger's 20 ms reset budget,
and under it once divided by the throughput check's largest slowdown (20x)."""


class WaitingResetEnv(LedgerEnv):
    """The ledger with a reset that waits ``WAIT_S`` doing nothing (a stand-in for a slow
    remote call or a sleep): slow on every machine, however loaded."""

    async def reset(self, task_id: str, seed: int) -> Observation:
        await asyncio.sleep(WAIT_S)
        return await super().reset(task_id, seed)


class ParticipationBonus:
    """+0.1 on every judged episode, whatever it did: a do-nothing policy is paid."""

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        return {"participation": 0.1} if verdict is not None else {}


class NoopPaidEnv(LedgerEnv):
    """The ledger, correct in every way but its reward: ``participation`` pays +0.1 to any
    judged episode, so replying nothing at once nets +0.09 after the step cost. Success
    rates stay as they were (the noop never succeeds)."""

    reward = ComposedReward(StandardReward(), ParticipationBonus())


class LampsWorld(BaseModel):
    lamps: dict[str, bool]


class LampsTruth(BaseModel):
    model_config = ConfigDict(frozen=True)

    lamps: dict[str, bool]
    lamp: str
    on: bool


class LampsFamily(TaskFamily[LampsTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, LampsTruth]:
        names = [f"lamp{i}" for i in range(params["lamps"])]
        lamps = {n: r.random() < 0.5 for n in names}
        lamp = r.choice(names)
        on = not lamps[lamp]
        verb = "on" if on else "off"
        return f"Turn {lamp} {verb}; leave the other lamps as they are.", LampsTruth(
            lamps=lamps, lamp=lamp, on=on
        )


LAMPS = LampsFamily("lamps.switch", 1, {1: ParamSpace({"lamps": IntKnob(2, 6)})})


class LampsEnv(ToolEnv[LampsTruth, LampsWorld]):
    """A correct environment whose one write is idempotent, as a real switch is: setting a
    lamp to the state it already has changes nothing and succeeds. The verifier judges the
    world (the asked lamp in the asked state, every other lamp untouched)."""

    spec = EnvSpec("lamps", "0.1.0", description="Switch a lamp.")
    tasks = TaskSource.of([LAMPS], Split())
    budget = Budget(max_steps=6)
    qa = QAProfile(verifier_kinds=("state",))
    system_prompt = "Switch the lamp with the tool, then reply done."

    def init_world(self, task: Task, r: random.Random) -> LampsWorld:
        return LampsWorld(lamps=dict(self.truth_of(task).lamps))

    @tool(writes=True)
    def set_lamp(self, lamp: str, on: bool) -> dict[str, bool]:
        """Set a lamp on or off (setting it to its current state changes nothing).

        Args:
            lamp: The lamp's name, such as lamp0.
            on: True for on, False for off.
        """
        if lamp not in self.world.lamps:
            raise ToolError("not_found", f"no lamp {lamp!r}")
        self.world.lamps[lamp] = on
        return {lamp: on}

    def verify(self, task: Task, world: LampsWorld, reply: str) -> Verdict:
        truth = self.truth_of(task)
        want = {**truth.lamps, truth.lamp: truth.on}
        passed = world.lamps == want
        return Verdict(
            passed=passed,
            reason=None if passed else "wrong_lamps",
            facts={"lamps": dict(world.lamps)},
            verifier="lamps.state@1",
        )

    def oracle_plan(self, task: Task) -> list[Action]:
        truth = self.truth_of(task)
        return [
            ToolCall(name="set_lamp", arguments={"lamp": truth.lamp, "on": truth.on}),
            Reply(text="done"),
        ]


class DuplicateBlindEnv(LedgerEnv):
    """Defect: the verifier checks that every wanted transfer was made, not that nothing
    else was: a transfer repeated (money moved twice) still passes. The collateral attack
    must keep catching this after learning to ignore idempotent repeats."""

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        made = {(t.from_account, t.to_account, t.amount_cents) for t in world.transfers}
        wanted = {(m.source, m.to, m.amount) for m in self.truth_of(task).moves}
        passed = wanted <= made
        return Verdict(
            passed=passed, reason=None if passed else "missing", verifier="ledger.blind@1"
        )
