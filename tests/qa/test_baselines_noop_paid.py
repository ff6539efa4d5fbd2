"""``scripted_baselines`` fails an environment that pays a policy for failing.

The old check looked at success rates (and the noop's ``task`` component) only, so
``NoopPaidEnv`` (the ledger plus a +0.1 ``participation`` component on every judged episode:
a reply of nothing nets +0.09) passed. Now the noop and random policies' mean earned reward
(positive components, costs left out) on the episodes they failed must stay at or below the
profile's ``baselines.noop_reward_max`` / ``bad_reward_max`` (default 0).
"""

from __future__ import annotations

import dataclasses

import pytest
from planted_seam import NoopPaidEnv

from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa.checks.scripted_baselines import earned
from gymforge.qa_profile import Baselines

FAST = QAOptions(episodes=8, fuzz_examples=10)


def test_a_paid_noop_fails() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(NoopPaidEnv), FAST)
    assert not result.passed, result.details
    assert "noop earned 0.100" in result.details
    assert result.metrics["noop_mean_earned_failed"] == pytest.approx(0.1)
    assert result.metrics["noop"] == 0.0  # success alone never showed it


def test_a_declared_ceiling_admits_it() -> None:
    """An author who can justify the payment declares it; the check then passes."""

    class Declared(NoopPaidEnv):
        qa = dataclasses.replace(
            NoopPaidEnv.qa,
            baselines=dataclasses.replace(Baselines(), noop_reward_max=0.1, bad_reward_max=0.1),
        )

    result = run_check("scripted_baselines", QATarget.from_factory(Declared), FAST)
    assert result.passed, result.details


def test_the_ledger_pays_nothing_for_failing() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(LedgerEnv), FAST)
    assert result.passed, result.details
    assert result.metrics["noop_mean_earned_failed"] == 0.0


def test_costs_are_not_earnings() -> None:
    """The episode record's component totals: negative totals (costs, penalties) and
    shaping that nets to zero earn nothing."""
    totals = {"step_cost": -0.02, "invalid_call": -0.1, "shaping": 0.0, "task": 0.0, "bonus": 0.25}
    assert earned([{"record": "episode", "reward_components": totals}]) == 0.25
