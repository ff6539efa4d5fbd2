"""``distribution_audit`` fails a family whose difficulty levels generate the same tasks.

``FlatDifficultyEnv``'s family overwrites the level's ``products`` knob with a constant, so
level 2 builds, from the same random stream, exactly the task level 1 does. Every level was
sampled and every id differed (the stream is seeded from the params), so the audit passed,
and a curriculum over its levels would schedule nothing. Now the audit builds each family's
levels from one shared stream and fails when every level gives the same task.
"""

from __future__ import annotations

from planted_rl_bugs import FlatDifficultyEnv, StockEnv

from gymforge.qa import QAOptions, QATarget, run_check

OPTS = QAOptions(episodes=12, fuzz_examples=20)


def test_levels_that_build_the_same_task_are_flagged() -> None:
    result = run_check("distribution_audit", QATarget.from_factory(FlatDifficultyEnv), OPTS)
    assert result.passed is False, result.details
    assert "stock.count builds the same task at difficulty levels [1, 2]" in result.details
    assert result.metrics["flat_levels"] == ["stock.count"]


def test_levels_that_differ_pass() -> None:
    result = run_check("distribution_audit", QATarget.from_factory(StockEnv), OPTS)
    assert result.passed, result.details
    assert result.metrics["flat_levels"] == []
