"""``scripted_baselines`` fails a reward that pays the answer's form more than its content.

``FormatOverCorrectEnv`` pays a ``format`` bonus of 2.0 for a reply of digits alone and 1.0
for the right number. On a tool environment the random policy replies junk or nothing, so
no baseline ever sent a wrong answer in the right form, and every check passed. Now a
near-miss baseline follows the oracle and replies with its answer scrambled (the same form,
other content); what it earns on the episodes it fails must stay within
``baselines.bad_reward_max``, the ceiling a near miss is paid by design.
"""

from __future__ import annotations

from planted_rl_bugs import FormatOverCorrectEnv, StockEnv

from gymforge.qa import QAOptions, QATarget, run_check

OPTS = QAOptions(episodes=12, fuzz_examples=20)


def test_format_bonus_over_correctness_is_flagged() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(FormatOverCorrectEnv), OPTS)
    assert result.passed is False, result.details
    assert "near_miss earned 2.000 per failed episode" in result.details
    assert result.metrics["near_miss_mean_earned_failed"] == 2.0


def test_honest_reward_pays_no_near_miss() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(StockEnv), OPTS)
    assert result.passed, result.details
    assert result.metrics["near_miss_mean_earned_failed"] == 0.0
