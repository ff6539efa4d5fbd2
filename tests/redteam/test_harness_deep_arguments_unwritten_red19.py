"""Attack: on the tasks it fails, send the harness a tool call it cannot turn into an action,
and have the episode retried and left unwritten.

A harness policy turns each tool call its harness makes into a ``ToolCall`` action. The
arguments are the model's own (the harness parses them from the model's answer and passes
them on over MCP), and ``ToolCall`` refuses arguments nested deeper than 100 levels (no
canonical JSON holds them), which every JSON parser on the way takes. The refusal was an
exception out of the policy's turn: an infrastructure failure, retried, and after the
retries the episode written nowhere (exit 3; in ``GymforgeRollout`` a placeholder row out of
its group's statistics). A model that fails a task turned the failure into a fresh sample
(best-of-n) or, failing again, into nothing: measured over 200 rollouts (100 tasks, two
each, the model solving every other conversation of a task), each failing conversation was
retried, and the retry (the task's next conversation) solved it: 100 retries, success rate
1.0 and mean reward 0.98 in the run's summary, against the plain failer's 0.5 and 0.48. A
model that fails the retries too has its episode unwritten and, with the default
``stop_after_failed_tasks``, stops the run after three such tasks in a row.

The defence: a harness's call that cannot be an action is the model's malformed output, an
``Invalid`` action the environment judges as any other policy's (its parse-error hint goes
back to the harness as the call's answer), never a failure of the policy's machinery.
"""

from __future__ import annotations

from pathlib import Path

from parallel_calls import LookupEnv, Model

from gymforge.integrations.trl import task_rows
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.jobs import Job
from gymforge.rollout.resolve import resolve_policy
from gymforge.rollout.runner import RunResult, run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.trajectory.io import read_episodes

HARNESS = "harness:tests.serve.harness_agents:tool_agent"
TASKS = 3
GROUP = 2


def play(trick: str | None, out: Path) -> RunResult:
    """Two rollouts of each of three tasks (one solved, one failed), as ``gymforge run``
    plays them, with the stop rule off (each failure is seen, not just the first few)."""
    rows = task_rows(LookupEnv, TASKS, seed=3)
    jobs = [
        Job(i * GROUP + k, r["task_id"], r["seed"], k)
        for i, r in enumerate(rows)
        for k in range(GROUP)
    ]
    spec = RunSpec(
        env="lookup-word",
        policy=HARNESS,
        jobs=jobs,
        out=out,
        concurrency=1,
        max_retries=1,
        stop_after_failed_tasks=None,
    )
    with OpenAITestServer(Model(trick or False)) as upstream:
        source = resolve_policy(HARNESS, upstream.base_url)
        return run_sync(spec, LocalExecutor(LookupEnv, source.factory, close_policy=source.close))


def test_a_call_too_deep_for_an_action_is_the_models_counted_failure(tmp_path: Path) -> None:
    honest = play(None, tmp_path / "honest")
    assert not honest.errors, honest.errors
    assert honest.summary["episodes"] == TASKS * GROUP
    assert honest.summary["success_rate"] == 0.5
    sabotaged = play("deep_arguments", tmp_path / "saboteur")
    # every episode is written and counted: none retried, none given up
    assert not sabotaged.errors, sabotaged.errors
    assert sabotaged.summary["infra_retries"] == 0
    assert sabotaged.summary["episodes"] == TASKS * GROUP
    assert sabotaged.summary["success_rate"] == 0.5
    assert sabotaged.summary["mean_reward"] <= honest.summary["mean_reward"]
    # the deep call is the model's malformed output, judged by the environment
    logs = read_episodes(tmp_path / "saboteur" / "trajectories.jsonl")
    failed = [log for log in logs if not log.end.success]  # type: ignore[union-attr]
    assert len(failed) == TASKS
    for log in failed:
        first = log.steps[1]
        assert first.action is not None and first.action.kind == "invalid"
        assert "nested deeper" in first.action.error  # type: ignore[union-attr]
