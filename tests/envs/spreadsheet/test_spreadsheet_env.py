"""spreadsheet as an environment: registered, QA-clean with the required baselines, the
held-out family refused by training paths, deterministic generation, the written process
rules enforced, and budgets that fit the oracle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from spreadsheet_helpers import SOURCE, episode, task_id

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs import BUILTIN
from gymforge.envs.spreadsheet import SpreadsheetEnv
from gymforge.envs.spreadsheet.families import FAMILIES, HELD_OUT_FAMILY
from gymforge.qa import QAReport
from gymforge.qa.episodes import play
from gymforge.rollout.skilled import SkilledPolicy
from gymforge.tasks import HeldOutError


def test_registered() -> None:
    assert BUILTIN["spreadsheet"] == "gymforge.envs.spreadsheet:SpreadsheetEnv"
    assert {f.name for f in FAMILIES} == {
        f"spreadsheet.{k}" for k in ("clean", "compute", "pivot", "reconcile", "fix")
    }


@pytest.mark.xdist_group("qa-spreadsheet")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("spreadsheet")
    assert report.passed, [(c.name, c.details) for c in report.checks if not c.passed]
    baselines = next(c for c in report.checks if c.name == "scripted_baselines")
    m = baselines.metrics
    assert m["oracle"] >= 0.95 and m["bad"] <= 0.05 and m["noop"] == 0.0


def test_held_out_family_is_refused_for_training() -> None:
    held = SOURCE.families[HELD_OUT_FAMILY].task(1, 5)
    with pytest.raises(HeldOutError):
        SOURCE.split.check_train(held)
    train = SOURCE.sample(40, 1, "train")
    assert train and not any(t.startswith(HELD_OUT_FAMILY) for t in train)
    heldout = SOURCE.sample(6, 1, "heldout")
    assert all(t.startswith(HELD_OUT_FAMILY) for t in heldout)
    for tid in heldout[:3]:
        assert episode(tid)[-1]["success"], tid  # the oracle solves held-out tasks too


def test_generation_is_deterministic_and_varied() -> None:
    for family in FAMILIES:
        a, b = family.task(2, 11), family.task(2, 11)
        assert a.model_dump() == b.model_dump()
        assert a.truth != family.task(2, 12).truth
        assert a.prompt and "Change nothing else" in a.prompt


def test_process_rule_read_before_write() -> None:
    def write_first(task: Task, plan: list[Action]) -> list[Action]:
        reads = [a for a in plan if isinstance(a, ToolCall) and a.name == "read_range"]
        rest = [a for a in plan if a not in reads]
        return [*rest[:-1], *reads, rest[-1]]

    records = episode(task_id("fix"), write_first)
    v = records[-2]["info"]["verdict"]
    assert not v["passed"]
    assert any(f.get("rule") == "read_before_write" for f in v["facts"]["findings"])


def test_budget_fits_the_oracle_with_room_for_retries() -> None:
    env = SpreadsheetEnv()
    for family in FAMILIES:
        task = family.task(3, 4)
        budget = env.episode_budget(task)
        plan = env.oracle_plan(task)
        assert budget.max_steps is not None and budget.max_steps >= 2 * len(plan)
        records = episode(task.task_id)
        assert records[-1]["success"] and records[-1]["tokens"] < (budget.max_tokens or 0)


def test_scripted_skill_levels_pass_at_their_rates() -> None:
    """``skilled:1=1,2=0.5,*=0``: the oracle on a seeded coin per task. Every level-1 task
    passes, no level-3 task does, and level 2 lands near half (the oracle never fails, so the
    pass rate is the coin's)."""

    async def rates() -> dict[int, float]:
        env = SpreadsheetEnv()
        policy = SkilledPolicy({1: 1.0, 2: 0.5, None: 0.0})
        out: dict[int, list[bool]] = {1: [], 2: [], 3: []}
        try:
            for level in out:
                for i, tid in enumerate(f.task_id(level, s) for f in FAMILIES for s in range(8)):
                    records = await play(env, policy, tid, i)
                    out[level].append(bool(records[-1]["success"]))
        finally:
            await env.close()
        return {k: sum(v) / len(v) for k, v in out.items()}

    got = asyncio.run(rates())
    assert got[1] == 1.0 and got[3] == 0.0
    assert 0.25 <= got[2] <= 0.75
