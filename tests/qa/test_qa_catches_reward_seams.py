"""``gymforge qa`` fails the reward defects of ``planted_reward_seams``, which it passed.

Each planted environment pays a policy that does not solve the task (shown first, on 40
tasks), and each is now failed by the check that should see it, with a message naming the
defect; the honest ``StockEnv`` passes the same checks.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from planted_reward_seams import (
    CutOffPaidEnv,
    HedgePaidEnv,
    HeldOutBlindEnv,
    LongEpisodeEnv,
    OneFamilyConstantEnv,
    VerbosePaidEnv,
    VerdictCacheEnv,
)
from planted_rl_bugs import StockEnv

from gymforge.core.types import Reply, ToolCall
from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa_profile import Baselines

OPTS = QAOptions(episodes=12, fuzz_examples=20)
DEFAULT = QAOptions()


async def _closing(env: Any, task_id: str, text: str) -> tuple[bool, dict[str, float]]:
    """Reply ``text`` at once: (success, the final step's reward components)."""
    await env.reset(task_id, 7)
    result = await env.step(Reply(text=text))
    return bool(result.info["success"]), dict(result.reward_components)


def _paid(env_cls: type[StockEnv], split: str, reply: Any) -> list[tuple[bool, float]]:
    """(success, positive reward) of ``reply(answer)`` sent at once on 40 tasks."""
    env = env_cls()
    out = []
    for task_id in env_cls.tasks.sample(40, 11, split):  # type: ignore[arg-type]
        answer = env_cls.tasks.resolve(task_id).truth["answer"]
        ok, parts = asyncio.run(_closing(env, task_id, reply(answer)))
        out.append((ok, sum(v for v in parts.values() if v > 0)))
    return out


def test_the_planted_defects_pay_without_solving() -> None:
    hedges = _paid(HedgePaidEnv, "train", lambda a: f"{a} or {a + 1}")
    assert all(not ok and paid == pytest.approx(0.8) for ok, paid in hedges)
    empties = _paid(HeldOutBlindEnv, "heldout", lambda a: "")
    assert all(ok for ok, _ in empties)
    padded = _paid(VerbosePaidEnv, "train", lambda a: "Let me think. " * 40 + str(a + 1))
    assert all(not ok and paid == pytest.approx(0.3) for ok, paid in padded)


def test_a_failed_attack_paid_by_partial_credit_fails_redteam() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(HedgePaidEnv), OPTS)
    assert result.passed is False, result.details
    assert "were paid for failing" in result.details
    assert "match.hedge_or earned 0.800" in result.details
    assert result.metrics["paid_for_failing"]["match.hedge_or"] == pytest.approx(0.8)


@pytest.mark.parametrize("opts", [OPTS, DEFAULT], ids=["quick", "default"])
def test_a_defect_of_the_held_out_region_fails_redteam(opts: QAOptions) -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(HeldOutBlindEnv), opts)
    assert result.passed is False, result.details
    assert "abstain.empty passed on stock.count/" in result.details
    assert result.metrics["heldout_tasks"] >= 1


def test_a_paid_long_reply_fails_baselines() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(VerbosePaidEnv), OPTS)
    assert result.passed is False, result.details
    assert "verbose_near_miss earned 0.300 per failed episode" in result.details


def test_a_paid_cut_off_reply_fails_truncation_accounting() -> None:
    env = CutOffPaidEnv()
    task_id = CutOffPaidEnv.tasks.sample(1, 3, "train")[0]
    ok, parts = asyncio.run(_closing(env, task_id, "z " * 4096))
    assert not ok and parts["effort"] == 0.3  # paid, never judged
    result = run_check("truncation_accounting", QATarget.from_factory(CutOffPaidEnv), OPTS)
    assert result.passed is False, result.details
    assert "earned 0.300 beyond costs" in result.details
    assert "effort" in result.details


def test_an_answer_paid_once_is_paid_on_every_later_task_of_the_instance() -> None:
    env = VerdictCacheEnv()
    first, *rest = VerdictCacheEnv.tasks.sample(41, 5, "train")
    gold = str(VerdictCacheEnv.tasks.resolve(first).truth["answer"])
    assert asyncio.run(_closing(env, first, gold))[0]
    assert all(asyncio.run(_closing(env, task_id, gold))[0] for task_id in rest)
    fresh = [asyncio.run(_closing(VerdictCacheEnv(), task_id, gold))[0] for task_id in rest]
    assert sum(fresh) <= 2  # a fresh instance judges it honestly (a gold shared by chance)
    result = run_check("scripted_baselines", QATarget.from_factory(VerdictCacheEnv), OPTS)
    assert result.passed is False, result.details
    assert "an earlier episode's answer is paid on later ones" in result.details
    assert result.metrics["constant"] == 1.0
    assert result.metrics["constant_fresh"] < 0.5


@pytest.mark.parametrize(
    "name", ["verifier_redteam", "scripted_baselines", "truncation_accounting"]
)
def test_the_honest_reference_passes(name: str) -> None:
    result = run_check(name, QATarget.from_factory(StockEnv), OPTS)
    assert result.passed, result.details


def test_a_constant_answer_of_one_family_fails_baselines() -> None:
    fam = OneFamilyConstantEnv.tasks.families["stock.reserved"]
    ids = OneFamilyConstantEnv.tasks.sample(40, 9, "train", None, [fam.name])
    assert all(asyncio.run(_closing(OneFamilyConstantEnv(), t, "42"))[0] for t in ids)
    result = run_check("scripted_baselines", QATarget.from_factory(OneFamilyConstantEnv), OPTS)
    assert result.passed is False, result.details
    assert "family stock.reserved" in result.details
    assert "'42'" in result.details
    assert result.metrics["family_constants"]["stock.reserved"] == 1.0


def test_a_family_constant_by_design_is_declared() -> None:
    """An unanswerable family whose prompts look like another's: declared, left alone."""

    class Declared(OneFamilyConstantEnv):
        qa = dataclasses.replace(
            OneFamilyConstantEnv.qa,
            baselines=Baselines(constant_families=("stock.reserved",)),
        )

    result = run_check("scripted_baselines", QATarget.from_factory(Declared), OPTS)
    assert result.passed, result.details
    assert result.metrics["family_constants"] == {}


def test_success_by_step_count_fails_redteam() -> None:
    async def stall_then_reply(env: Any, task_id: str) -> bool:
        await env.reset(task_id, 7)
        for _ in range(5):
            await env.step(ToolCall(name="find_product", arguments={"query": "x"}))
        result = await env.step(Reply(text="done"))
        return bool(result.info["success"])

    ids = LongEpisodeEnv.tasks.sample(40, 13, "train")
    assert all(asyncio.run(stall_then_reply(LongEpisodeEnv(), t)) for t in ids)
    result = run_check("verifier_redteam", QATarget.from_factory(LongEpisodeEnv), OPTS)
    assert result.passed is False, result.details
    assert "stall_then_claim passed" in result.details
