"""Attack: on the tasks it fails, write what the rubric judge's model will not answer in
time, or will not read, and have the episode retried or the run stopped.

A ``RubricJudge`` sends the agent's answer to a judge model through a gymforge policy. A
judge that runs past its call timeout on every attempt raises ``PolicyTimedOut`` and one
that refuses the request (a hosted judge's moderation) ``PolicyRequestRejected``: both
``InfraError``, which a ``ToolEnv`` lets out of ``step`` as its infrastructure failing.
The first was retried (a fresh sample of the answer) and, failing again, left unwritten;
the second stopped the run (exit 2, nothing counted). An answer can do either: talk the
judge into reasoning at length, or hold what its moderation flags. Over 200 episodes (100
tasks solved, 100 failed), a policy that answered its failures with such text had 100
episodes written, all successes (success rate 1.0, every failure retried and given up),
against the plain failer's 0.5; with the refused text the run stopped at the first.

The defence (``RubricJudge``, with the rule of ``gymforge.core.blame``): a judge model that
stalls on, refuses or keeps failing on the answer while it answers the same rubric prompt
with none of the agent's text is the answer's doing, a failed verdict (``judge_timed_out``,
``judge_refused``, ``judge_failed``); a judge that fails the probe too is still the
infrastructure's (retried) or the configuration's (the run stops), as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_answer import REFUSE, STALL, DeadJudgeEnv, JudgedEnv, half_policy

from gymforge.core.env import Environment
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.jobs import Job
from gymforge.rollout.runner import RunResult, run_sync
from gymforge.rollout.spec import RunSpec

TASKS = 8


def play(env: type[Environment], miss: str, out: Path) -> RunResult:
    ids = env().tasks.sample(TASKS, 0, "train")  # type: ignore[attr-defined]
    jobs = [Job(i, task_id, 7, 0) for i, task_id in enumerate(ids)]
    spec = RunSpec(
        env="planted-rubric-judge",
        policy="half",
        jobs=jobs,
        out=out,
        max_retries=1,
        stop_after_failed_tasks=None,
    )
    return run_sync(spec, LocalExecutor(env, lambda: half_policy("half", miss)))


@pytest.mark.parametrize("marker", [STALL, REFUSE], ids=["stall", "refusal"])
def test_an_answer_the_judge_cannot_grade_is_a_counted_failure(marker: str, tmp_path: Path) -> None:
    honest = play(JudgedEnv, "no idea", tmp_path / "honest")
    assert not honest.errors and honest.summary["episodes"] == TASKS
    assert honest.summary["success_rate"] == 0.5
    sabotaged = play(JudgedEnv, f"no idea {marker}", tmp_path / "saboteur")
    assert not sabotaged.errors, sabotaged.errors
    assert sabotaged.summary["infra_retries"] == 0
    assert sabotaged.summary["episodes"] == TASKS
    assert sabotaged.summary["success_rate"] == 0.5
    reason = "judge_timed_out" if marker == STALL else "judge_refused"
    assert sabotaged.summary["failure_reasons"] == {reason: TASKS // 2}


def test_a_judge_that_answers_nothing_is_still_infrastructure(tmp_path: Path) -> None:
    dead = play(DeadJudgeEnv, "no idea", tmp_path / "dead")
    assert dead.summary["episodes"] == 0 and dead.summary["infra_retries"] == TASKS
    assert len(dead.errors) == TASKS
