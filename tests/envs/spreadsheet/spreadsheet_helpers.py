"""Helpers shared by the spreadsheet tests: play an episode (the oracle's plan, or an
edited one) and drive a reset environment by hand."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.spreadsheet import SpreadsheetEnv
from gymforge.envs.spreadsheet.families import FAMILIES
from gymforge.qa.checks.common import play
from gymforge.world.attacks import PlanAttack, PlanEdit

SOURCE = SpreadsheetEnv.tasks
KINDS = ("clean", "compute", "pivot", "reconcile", "fix")


def task_id(kind: str, seed: int = 1, rows: int = 12) -> str:
    """A task of ``kind`` with ``rows`` records, at the fault rate of that size's level."""
    family = SOURCE.families[f"spreadsheet.{kind}"]
    fault_rate = 0.0 if rows <= 14 else 0.04 if rows <= 28 else 0.08
    return family.variant_id({"rows": rows, "fault_rate": fault_rate}, seed)


def episode(tid: str, edit: PlanEdit | None = None, seed: int = 0) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = SpreadsheetEnv()
        try:
            return await play(env, PlanAttack(edit or (lambda t, p: p)), tid, seed)
        finally:
            await env.close()

    return asyncio.run(go())


class Driver:
    """A reset environment stepped by hand: ``call`` returns the tool result's JSON."""

    def __init__(self, tid: str, seed: int = 0) -> None:
        self.env = SpreadsheetEnv()
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.env.reset(tid, seed))
        self.n = 0

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        self.n += 1
        result = self.loop.run_until_complete(
            self.env.step(ToolCall(name=tool, arguments=arguments, call_id=f"c{self.n}"))
        )
        out: dict[str, Any] = result.info["tool_result"]
        return out

    def write(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return self.call(tool, idempotency_key=f"k{self.n}", **arguments)

    def run(self, actions: list[Action]) -> Any:
        result = None
        for a in actions:
            result = self.loop.run_until_complete(self.env.step(a))
        return result

    def close(self) -> None:
        self.loop.run_until_complete(self.env.close())
        self.loop.close()


def all_tasks(levels: tuple[int, ...] = (1, 2, 3), seeds: range = range(2)) -> list[Task]:
    return [f.task(level, seed) for f in FAMILIES for level in levels for seed in seeds]


Edit = Callable[[Task, list[Action]], list[Action] | None]
