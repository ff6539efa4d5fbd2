"""``scripted_baselines`` fails an environment whose correct answer does not depend on the task.

``ConstantGoldEnv`` stocks the asked-for product with 42 units on every task, so "42" is
right everywhere. Every agent QA played either solved the task (the oracle) or answered
wrong for its own task (random, noop, the near miss), so every check passed. Now a
constant-answer baseline replays the oracle's actions of one task (the one whose answer is
the most common over the sampled tasks) on every other task; its success rate must stay
within ``baselines.constant_max``.
"""

from __future__ import annotations

from planted_rl_bugs import ConstantGoldEnv, StockEnv

from gymforge.qa import Baselines, QAOptions, QAProfile, QATarget, run_check

OPTS = QAOptions(episodes=12, fuzz_examples=20)


def test_constant_gold_is_flagged() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(ConstantGoldEnv), OPTS)
    assert result.passed is False, result.details
    assert "constant answer '42'" in result.details
    assert "the oracle's answer on 12 of 12 sampled tasks" in result.details
    assert result.metrics["constant"] == 1.0


def test_task_dependent_answer_passes() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(StockEnv), OPTS)
    assert result.passed, result.details
    assert result.metrics["constant"] == 0.0
    assert result.metrics["constant_answer_share"] < 0.5


def test_a_declared_answer_space_raises_the_ceiling() -> None:
    """An answer space small by design (yes/no, multiple choice) declares its ceiling."""

    class Declared(ConstantGoldEnv):
        qa = QAProfile(verifier_kinds=("match", "state"), baselines=Baselines(constant_max=1.0))

    result = run_check("scripted_baselines", QATarget.from_factory(Declared), OPTS)
    assert result.passed, result.details
    assert "constant answer 100% (<= 100%)" in result.details
