"""Move every unit from one shelf to another; the verifier judges the shelves, not the reply."""

import random
from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.authoring import (
    Budget, EnvSpec, IntKnob, ParamSpace, QAProfile, Reply, Split, Task,
    TaskFamily, TaskSource, ToolCall, ToolEnv, ToolError, Verdict, tool,
)  # fmt: skip


class MoveTruth(BaseModel):
    model_config = ConfigDict(frozen=True)
    units: dict[str, int]  # shelf -> units on it when the episode starts
    src: str
    dst: str


class MoveFamily(TaskFamily[MoveTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MoveTruth]:
        units = {f"S{i}": r.randrange(1, 100) for i in range(params["shelves"])}
        src, dst = r.sample(sorted(units), 2)
        prompt = f"Move every unit on shelf {src} to shelf {dst}, then reply 'done'."
        return prompt, MoveTruth(units=units, src=src, dst=dst)


LEVELS = {1: ParamSpace({"shelves": IntKnob(2, 5)}), 2: ParamSpace({"shelves": IntKnob(6, 12)})}
HELD_OUT = Split(regions={"shelves.move": {"many": lambda p: p["shelves"] >= 11}})


class ShelvesEnv(ToolEnv[MoveTruth, dict[str, int]]):
    spec = EnvSpec("shelves", "1.0.0", description="Move stock between shelves.")
    tasks = TaskSource.of([MoveFamily("shelves.move", 1, LEVELS)], HELD_OUT)
    budget = Budget(max_steps=6)
    qa = QAProfile(verifier_kinds=("state",))

    def init_world(self, task: Task, r: random.Random) -> dict[str, int]:
        return dict(self.truth_of(task).units)

    @tool
    def shelves(self) -> dict[str, int]:
        """Every shelf, with the units on it."""
        return dict(self.world)

    @tool(writes=True)
    def move(self, src: str, dst: str, units: int) -> int:
        """Move units from one shelf to another; returns the units now on ``dst``.

        Args:
            src: The shelf to take them from.
            dst: Another shelf, to put them on.
            units: How many, from 1 to what ``src`` holds.
        """
        if dst not in self.world or src == dst or not 0 < units <= self.world.get(src, 0):
            raise ToolError("invalid_arguments", f"cannot move {units} units {src} -> {dst}")
        self.world[src] -= units
        self.world[dst] += units
        return self.world[dst]

    def verify(self, task: Task, world: dict[str, int], reply: str) -> Verdict:
        t = self.truth_of(task)
        ok = world == {**t.units, t.src: 0, t.dst: t.units[t.src] + t.units[t.dst]}
        return Verdict(passed=ok, reason=None if ok else "shelves_wrong", facts={"units": world})

    def oracle_plan(self, task: Task) -> list[Any]:
        t = self.truth_of(task)
        move = {"src": t.src, "dst": t.dst, "units": t.units[t.src]}
        return [ToolCall(name="move", arguments=move), Reply(text="done")]
