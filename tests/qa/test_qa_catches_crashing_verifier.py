"""``verifier_redteam`` fails a verifier that crashes on an answer.

``CrashingVerifierEnv`` calls ``int()`` on the reply, so any reply that is not a bare
integer raises. The environment records the crash as a ``verifier_error`` failure (it is
never a success), so every attack "was rejected" and every check passed: a verifier that
cannot judge a reply in words, and would crash as well on a right answer written ``42.``,
went into training unnoticed. Now an attack episode that ends in a verifier error is a
finding, named with the attack and the exception.
"""

from __future__ import annotations

from planted_rl_bugs import CrashingVerifierEnv, StockEnv

from gymforge.qa import QAOptions, QATarget, run_check

OPTS = QAOptions(episodes=12, fuzz_examples=20)


def test_verifier_crash_on_an_attack_is_flagged() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(CrashingVerifierEnv), OPTS)
    assert result.passed is False, result.details
    assert "the verifier crashed" in result.details
    assert "verifier_error: ValueError" in result.details
    assert "abstain.refusal" in result.metrics["verifier_crashed"]


def test_honest_verifier_never_crashes() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(StockEnv), OPTS)
    assert result.passed, result.details
    assert result.metrics["verifier_crashed"] == []
