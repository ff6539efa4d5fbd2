"""Per-step process rewards from rule checks, on the support desk."""

from __future__ import annotations

import asyncio
from typing import Any

from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk import redteam as rt
from gymforge.qa.checks.common import play
from gymforge.reward.process import RuleCredit
from gymforge.rollout import OraclePolicy
from gymforge.verify.rules import LogEvent, Match, NeverAfter
from gymforge.world.attacks import PlanAttack

BASE = {"distractors": 0, "page_size": 8, "fault_rate": 0.0, "region": "na"}
DUP = SupportDeskEnv.tasks.families["support.duplicate_charge"].variant_id(BASE, 1)


def records(policy: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = SupportDeskEnv()
        try:
            return await play(env, policy, DUP, 0)
        finally:
            await env.close()

    return asyncio.run(go())


def test_compliant_episodes_pay_no_process_cost() -> None:
    steps = records(OraclePolicy())[:-1]
    assert steps[-1]["info"]["success"]
    assert not any("process" in s["reward_components"] for s in steps)


def test_each_violation_is_charged_once_at_its_step() -> None:
    steps = records(PlanAttack(rt.no_keys))[:-1]
    charged = [
        (s["step"], s["reward_components"]["process"])
        for s in steps
        if "process" in s["reward_components"]
    ]
    assert charged and all(v < 0 for _, v in charged)
    writes = [
        s["step"]
        for s in steps
        if s["action"]
        and s["action"]["kind"] == "tool_call"
        and "idempotency_key" not in s["action"]["arguments"]
        and s["action"]["name"] in rt.WRITE_TOOLS
    ]
    assert {step for step, _ in charged} >= set(writes)
    final = steps[-1]["info"]["verdict"]
    assert not final["passed"]  # the verifier still judges the whole log on its own


def test_rule_credit_charges_new_violations_only() -> None:
    credit = RuleCredit(
        [NeverAfter(Match("tool.write"), Match("tool.close"), name="no_write")], penalty=-0.5
    )
    log = [LogEvent(1, "tool.close")]
    assert credit(log) == {}
    log.append(LogEvent(2, "tool.write"))
    assert credit(log) == {"process": -0.5}
    assert credit(log) == {}  # already charged
    log.append(LogEvent(3, "tool.write"))
    assert credit(log) == {"process": -0.5}
    credit.reset()
    assert credit(log) == {"process": -1.0}
