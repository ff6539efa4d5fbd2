"""Attack: pass QA's constant-answer baseline with an environment whose answer is submitted
through a tool.

QA's constant-answer agent replays, on every sampled task, the oracle actions of the task
whose *final reply* is the most common; an environment whose answer does not depend on the
task (every gold is 42) fails it. But a tool declared ``@tool(ends_episode=True)`` (a
``submit``) ends the episode with its result as the answer, and its oracle sends no reply at
all: with no reply to count, the baseline found no donor and was skipped, silently, so an
environment whose ``submit(count=42)`` is right on every task passed QA, and a policy
trained on it learns the constant, not the lookup. Success would be ``scripted_baselines``
passing such an environment; the defence counts the episode's last action, a reply's text
or a submitting call, as its answer.
"""

from __future__ import annotations

from typing import Any

from gymforge.authoring import Task, TaskSource, ToolCall, tool
from gymforge.qa import QAOptions, QATarget, run_check
from tests.qa.planted_rl_bugs import HELD_OUT, LEVELS, ConstantGoldFamily, StockEnv

OPTS = QAOptions(episodes=12, fuzz_examples=20)


class SubmitStockEnv(StockEnv):
    """The honest stock lookup, answered by a ``submit`` tool that ends the episode."""

    system_prompt = "You are a stock clerk. Use the tools, then submit the count."

    @tool(ends_episode=True)
    def submit(self, count: int) -> int:
        """Submit the number of units in stock; this ends the task.

        Args:
            count: The units in stock.
        """
        return count

    def oracle_plan(self, task: Task) -> list[Any]:
        *lookups, _reply = super().oracle_plan(task)
        return [*lookups, ToolCall(name="submit", arguments={"count": self.truth_of(task).answer})]


class ConstantSubmitEnv(SubmitStockEnv):
    """Bug: every task's asked-for product has 42 units, so ``submit(count=42)`` solves all."""

    tasks = TaskSource.of([ConstantGoldFamily("stock.count", 1, LEVELS)], HELD_OUT)


def test_a_constant_submitted_through_a_tool_is_flagged() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(ConstantSubmitEnv), OPTS)
    assert result.passed is False, result.details
    assert result.metrics["constant"] == 1.0
    assert "correct answer does not depend on the task" in result.details


def test_a_task_dependent_submission_still_passes() -> None:
    result = run_check("scripted_baselines", QATarget.from_factory(SubmitStockEnv), OPTS)
    assert result.passed, result.details
    assert result.metrics["constant"] == 0.0
