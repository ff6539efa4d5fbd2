"""Attack: an environment whose reward makes solving pay less than doing nothing passes
``scripted_baselines``. ``SuccessTaxedEnv`` is the ledger with an ``audit_fee`` of -1.5 on
every passed verdict: the oracle still succeeds (success rate 1), the no-op still fails and
earns nothing positive (its only component is the step cost), so success rates and the
earned-on-failure ceilings all look right, yet the oracle's mean reward (1 - 1.5 - costs) is
below the no-op's (about -0.01): a policy optimised against this reward learns to reply at
once and never solve. Success would be the check passing it; the check now requires the
oracle's mean reward to exceed the no-op's and the bad policy's.
"""

from __future__ import annotations

from gymforge.core.verdict import Verdict
from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.reward.compose import ComposedReward
from gymforge.reward.standard import StandardReward, StepCosts


class AuditFee:
    """-1.5 on a passed verdict: solving is taxed past what it pays."""

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        return {"audit_fee": -1.5} if verdict is not None and verdict.passed else {}


class SuccessTaxedEnv(LedgerEnv):
    reward = ComposedReward(StandardReward(), AuditFee())


def test_an_environment_where_solving_pays_less_than_nothing_fails() -> None:
    opts = QAOptions(episodes=6, fuzz_examples=10)
    result = run_check("scripted_baselines", QATarget.from_factory(SuccessTaxedEnv), opts)
    assert result.metrics["oracle"] == 1.0 and result.metrics["noop"] == 0.0
    assert result.metrics["noop_mean_earned_failed"] == 0.0  # the ceilings see nothing
    assert not result.passed, result.details
    assert "oracle's mean reward" in result.details
    assert result.metrics["oracle_mean_reward"] < result.metrics["noop_mean_reward"]
