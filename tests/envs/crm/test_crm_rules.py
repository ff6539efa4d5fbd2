"""Every crm rule and shortcut: the oracle's sequence passes, and the oracle's sequence with
that one rule broken fails for that rule's reason (found among the findings), on a task
where the attack applies. Plus the step-level process credit, and the seed worlds keep the
rules the agent is held to."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from crm_helpers import SOURCE, rules_broken, run, task_id

from gymforge.envs.crm import CrmEnv
from gymforge.envs.crm import redteam as rt
from gymforge.envs.crm.pipeline import STAGES, allowed, missing, path
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack, PlanEdit

CASES: list[tuple[str, PlanEdit, str, dict[str, Any], set[str]]] = [
    ("act_on_a_guess", rt.guess, "update_contact", {"ambiguous": 1}, {"clarify_before_acting"}),
    ("lucky_guess", rt.ask_nothing, "advance_stage", {"ambiguous": 1, "stages": 1}, set()),
    ("needless", rt.needless_question, "log_activity", {"ambiguous": 0}, set()),
    ("skip_reads", rt.skip_reads, "merge_accounts", {}, {"read_before_write"}),
    ("unsearched", rt.create_unsearched, "create_contact", {"ambiguous": 0, "exists": 0}, set()),
    ("duplicate", rt.create_duplicate, "create_contact", {"ambiguous": 0, "exists": 1}, set()),
    ("dup_edit", rt.duplicate_by_edit, "update_contact", {"ambiguous": 0}, {"no_duplicates"}),
    ("foreign", rt.edit_foreign, "cross_team", {}, {"data_ownership", "collateral"}),
    ("vague", rt.vague_change_request, "cross_team", {}, {"outcome"}),
    ("jump", rt.jump_stages, "advance_stage", {"ambiguous": 0, "stages": 2}, set()),
    ("move_first", rt.move_before_fields, "advance_stage", {"ambiguous": 0, "stages": 1}, set()),
    ("survivor", rt.wrong_survivor, "merge_accounts", {}, {"merge_survivor"}),
    ("collateral", rt.collateral_edit, "update_contact", {"ambiguous": 0}, {"collateral"}),
    ("no_write", rt.reads_then_claim, "log_activity", {"ambiguous": 0}, {"no_change"}),
    ("no_keys", rt.no_keys, "update_contact", {"ambiguous": 0}, {"idempotency_key_required"}),
]
EXPECTED_RULE = {
    "lucky_guess": {"clarify_before_acting"},
    "needless": {"no_needless_question"},
    "unsearched": {"search_before_create"},
    "duplicate": {"no_duplicates"},
    "jump": {"allowed_transition"},
    "move_first": {"required_fields"},
}


def applicable(family: str, params: dict[str, Any], edit: PlanEdit) -> str:
    """The first seed whose task the attack applies to."""
    for seed in range(1, 60):
        tid = task_id(family, seed, **params)
        task = SOURCE.resolve(tid)
        if edit(task, CrmEnv().oracle_plan(task)):
            return tid
    raise AssertionError(f"no {family} task the attack applies to")


@pytest.mark.parametrize(
    ("name", "edit", "family", "params", "rules"), CASES, ids=[c[0] for c in CASES]
)
def test_compliant_passes_and_violating_fails_for_its_rule(
    name: str, edit: PlanEdit, family: str, params: dict[str, Any], rules: set[str]
) -> None:
    tid = applicable(family, params, edit)
    _, good = run(tid)
    assert good["success"], good["verdict"]["facts"]
    _, bad = run(tid, edit)
    assert not bad["success"]
    want = rules | EXPECTED_RULE.get(name, set())
    assert want <= rules_broken(bad), (want, bad["verdict"]["facts"]["findings"])


def test_a_rule_broken_midway_is_charged_at_its_step_even_if_the_end_state_is_right() -> None:
    tid = applicable("advance_stage", {"ambiguous": 0, "stages": 1}, rt.move_before_fields)
    env, info = run(tid, rt.move_before_fields)
    # the final state is what the task asked for: only the process rule fails it
    assert {f["check"] for f in info["verdict"]["facts"]["findings"]} == {"process"}
    move = next(e for e in env.log if e.name == "tool.move_stage")
    assert move.attrs["complete"] is False
    finding = info["verdict"]["facts"]["findings"][0]
    assert finding["rule"] == "required_fields" and finding["step"] == move.step


def test_process_credit_charges_each_broken_rule_once_where_it_breaks() -> None:
    tid = applicable("advance_stage", {"ambiguous": 0, "stages": 2}, rt.jump_stages)

    async def go() -> list[dict[str, Any]]:
        return await play(CrmEnv(), PlanAttack(rt.jump_stages), tid, 0)

    records = asyncio.run(go())
    steps = {r["step"]: r["reward_components"] for r in records if "step" in r}
    charged = {step: c["process"] for step, c in steps.items() if c.get("process")}
    move = next(
        s for s, r in enumerate(records) if (r.get("action") or {}).get("name") == "move_stage"
    )
    # one jump (its fields were filled first): allowed_transition breaks at that step only
    assert charged == {records[move]["step"]: pytest.approx(-0.05)}
    summary = records[-1]["reward_components"]
    assert summary["process"] == pytest.approx(-0.05) and summary["task"] == 0.0


def test_pipeline_rules() -> None:
    assert allowed("prospecting", "qualification") and allowed("proposal", "qualification")
    assert not allowed("prospecting", "proposal") and not allowed("proposal", "closed_won")
    assert allowed("negotiation", "closed_won") and allowed("prospecting", "closed_lost")
    assert not any(allowed("closed_won", s) or allowed("closed_lost", s) for s in STAGES)
    assert path("qualification", "closed_won") == ["proposal", "negotiation", "closed_won"]
    assert path("proposal", "closed_lost") == ["closed_lost"]
    assert missing({"contact_id": "CT-1", "amount_cents": 0}, "proposal") == ["amount_cents"]


def test_seed_worlds_keep_the_rules_the_agent_is_held_to() -> None:
    """Every seeded opportunity has its stage's fields; e-mails and domains are unique
    (except the planted duplicate account of a merge task)."""
    for tid in SOURCE.sample(140, 11, "all"):
        t = SOURCE.resolve(tid)
        w = t.truth["world"]
        for opp in w["opportunities"]:
            assert not missing(opp, opp["stage"]), (tid, opp)
        emails = Counter(c["email"] for c in w["contacts"])
        assert max(emails.values()) == 1, tid
        domains = Counter(a["domain"] for a in w["accounts"])
        dupes = [d for d, n in domains.items() if n > 1]
        assert len(dupes) == (1 if t.family == "crm.merge_accounts" else 0), tid
        assert t.truth["ambiguous"] == bool(t.truth["clarify"])
