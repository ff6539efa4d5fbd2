"""``state.collateral_repeat_write`` judges what a repeated write did to the world.

The old attack counted any success after a repeated write as a breach, so a correct
environment whose write is idempotent (``LampsEnv``: switching on a lamp that is on changes
nothing) failed ``verifier_redteam``, and an author had to make a correct tool refuse a no-op
write to pass it. Now the world's fingerprint is compared around the repeat: unchanged means
the attack does not apply on that task. A repeat that does change the world
(``DuplicateBlindEnv``: money moved twice) is still a breach.
"""

from __future__ import annotations

from planted_seam import DuplicateBlindEnv, LampsEnv

from gymforge.qa import QAOptions, QATarget, run_check

FAST = QAOptions(episodes=8, fuzz_examples=10)


def test_idempotent_write_is_not_collateral_damage() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(LampsEnv), FAST)
    assert result.passed, result.details
    assert "state.collateral_repeat_write" in result.metrics["not_applicable"]
    assert result.metrics["breached"] == []


def test_a_repeat_that_changes_the_world_is_still_caught() -> None:
    result = run_check("verifier_redteam", QATarget.from_factory(DuplicateBlindEnv), FAST)
    assert not result.passed
    assert "state.collateral_repeat_write" in result.metrics["breached"]


def test_lamps_env_passes_its_oracle() -> None:
    """The planted environment is otherwise sound: its oracle succeeds, a no-op does not."""
    result = run_check("scripted_baselines", QATarget.from_factory(LampsEnv), FAST)
    assert result.passed, result.details
