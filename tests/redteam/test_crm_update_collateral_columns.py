"""Attack: do the requested change, and in the same call overwrite what nobody asked about.

An expected update was compared on the columns the request names only: the update that set
a contact's phone could also give them another e-mail address and last name, the one that
filled a deal's fields could rename it, and a new contact could come with an invented phone
number, and each verdict passed. Success would be full task reward for an episode that
hijacks a contact's e-mail or corrupts a record, which the verifier's "expected rows
changed, nothing else" promises to fail (``collateral``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack

BASE = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
CASES: dict[str, tuple[str, dict[str, Any], str, dict[str, Any]]] = {
    "contact_email_hijack": (
        "update_contact",
        {"ambiguous": 0},
        "update_record",
        {"email": "someone@elsewhere.example.com", "last_name": "Other"},
    ),
    "deal_renamed": (
        "advance_stage",
        {"ambiguous": 0, "stages": 1},
        "update_record",
        {"name": "Renamed deal", "next_step": "call them"},
    ),
    "invented_phone": (
        "create_contact",
        {"ambiguous": 0, "exists": 0},
        "create_contact",
        {"phone": "+1-900-555-0199"},
    ),
    "existing_contact_phone": (
        "create_contact",
        {"ambiguous": 0, "exists": 1},
        "update_record",
        {"phone": "+1-900-555-0199"},
    ),
}


def _play(family: str, params: dict[str, Any], tool: str, extra: dict[str, Any]) -> dict[str, Any]:
    tid = CrmEnv.tasks.families[f"crm.{family}"].variant_id({**BASE, **params}, 2)

    def edit(task: Task, plan: list[Action]) -> list[Action]:
        out = []
        for a in plan:
            if isinstance(a, ToolCall) and a.name == tool:
                args = dict(a.arguments)
                if tool == "update_record":
                    args["changes"] = {**args["changes"], **extra}
                else:
                    args.update(extra)
                a = a.model_copy(update={"arguments": args})
            out.append(a)
        return out

    async def go() -> dict[str, Any]:
        env = CrmEnv()
        try:
            records = await play(env, PlanAttack(edit), tid, 0)
        finally:
            await env.close()
        return records[-2]["info"]["verdict"]

    return asyncio.run(go())


@pytest.mark.parametrize("case", sorted(CASES))
def test_extra_columns_in_the_requested_write_fail(case: str) -> None:
    verdict = _play(*CASES[case])
    assert not verdict["passed"], case
    checks = {f["check"] for f in verdict["facts"]["findings"]}
    assert checks & {"collateral", "wrong_rows"}, checks


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_requested_write_alone_passes(case: str) -> None:
    family, params, tool, _ = CASES[case]
    assert _play(family, params, tool, {})["passed"]
