"""``verifier_redteam`` fails a verifier that passes an empty reply or a refusal.

``RefusalPassesEnv`` takes any reply that is not a number for a declined answer and passes
it: "I cannot help with that." solves every task. No generic attack sent an abstention, and
the random policy replies rarely on a tool environment, so every check passed.
"""

from __future__ import annotations

from planted_rl_bugs import RefusalPassesEnv, StockEnv

from gymforge.qa import QAOptions, QATarget, run_check

OPTS = QAOptions(episodes=12, fuzz_examples=20)


def test_refusal_that_passes_is_a_breach() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(RefusalPassesEnv), OPTS)
    assert result.passed is False, result.details
    assert "abstain.refusal passed" in result.details


def test_honest_verifier_rejects_abstentions() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(StockEnv), OPTS)
    assert result.passed, result.details
    assert "abstain.empty" not in result.metrics["not_applicable"]
