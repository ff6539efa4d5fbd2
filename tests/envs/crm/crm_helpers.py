"""Shared helpers of the crm tests: task ids by knobs, and playing an (edited) oracle plan."""

from __future__ import annotations

import asyncio
from typing import Any

from gymforge.envs.crm import CrmEnv
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack, PlanEdit

SOURCE = CrmEnv.tasks
BASE = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}


def task_id(family: str, seed: int = 1, **params: Any) -> str:
    fam = SOURCE.families[f"crm.{family}"]
    return fam.variant_id({**BASE, **params}, seed)


def run(tid: str, edit: PlanEdit | None = None, seed: int = 0) -> tuple[CrmEnv, dict[str, Any]]:
    """Play the (edited) oracle plan; return the environment and the final step's info."""

    async def go() -> tuple[CrmEnv, list[dict[str, Any]]]:
        env = CrmEnv()
        records = await play(env, PlanAttack(edit or (lambda t, p: p)), tid, seed)
        return env, records

    env, records = asyncio.run(go())
    return env, records[-2]["info"]


def rules_broken(info: dict[str, Any]) -> set[str]:
    return {f.get("rule") or f["check"] for f in info["verdict"]["facts"]["findings"]}
