"""The one runner's rules hold for any executor: retries, the stop after repeated
infrastructure failures, an executor that goes down, and resume after it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import InfraError
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, OraclePolicy, RunSpec, run
from gymforge.rollout.executors.base import ExecutorDown, Records
from gymforge.rollout.jobs import Job
from gymforge.trajectory.io import read_episodes, verify_chain

TASKS = LedgerEnv.tasks.sample(6, 3)


class Flaky:
    """An executor that plays on a ``LocalExecutor`` but fails chosen attempts, as a
    remote executor whose worker dies would."""

    name = "flaky"

    def __init__(self, fail: Any) -> None:
        self.inner = LocalExecutor(LedgerEnv, OraclePolicy)
        self.fail = fail
        self.attempts: dict[tuple[str, int, int], int] = {}

    def capacity(self, spec: RunSpec, jobs: int) -> int:
        return spec.concurrency

    async def open(self, spec: RunSpec, run_id: str) -> None:
        await self.inner.open(spec, run_id)

    async def play(self, job: Job) -> Records:
        n = self.attempts[job.key] = self.attempts.get(job.key, 0) + 1
        error = self.fail(job, n)
        if error is not None:
            await asyncio.sleep(0)
            raise error
        return await self.inner.play(job)

    async def close(self) -> None:
        await self.inner.close()

    def stats(self) -> dict[str, Any]:
        return {"attempts": sum(self.attempts.values())}


def keys(out: Path) -> list[tuple[str, int, int]]:
    logs = read_episodes(out / "trajectories.jsonl")
    for log in logs:
        verify_chain(log)
    return [(g.end.task_id, g.end.seed, g.end.rollout) for g in logs if g.end]


def test_any_executors_failed_attempts_are_retried_and_written_once(tmp_path: Path) -> None:
    executor = Flaky(lambda job, n: InfraError("worker died") if n == 1 else None)
    spec = RunSpec(env="ledger", policy="oracle", tasks=TASKS, group=2, out=tmp_path, concurrency=3)
    result = asyncio.run(run(spec, executor))
    s = result.summary
    assert s["episodes"] == 12 and s["infra_retries"] == 12 and s["infra_errors"] == 0
    assert s["backend"] == "flaky" and s["attempts"] == 24
    assert sorted(keys(tmp_path)) == sorted(j.key for j in spec.job_list())


def test_the_stop_rule_holds_for_any_executor(tmp_path: Path) -> None:
    down = {TASKS[0], TASKS[1]}  # two tasks the infrastructure cannot run

    def fail(job: Job, n: int) -> InfraError | None:
        return InfraError("no worker can run it") if job.task_id in down else None

    class Slow(Flaky):
        """The healthy tasks' episodes take a while (as any real one does), so the down
        tasks use up their retries while jobs are left: a worker no longer waits for the
        disk between episodes, so it no longer leaves the queue full for that long."""

        async def play(self, job: Job) -> Records:
            if job.task_id not in down:
                await asyncio.sleep(0.05)
            return await super().play(job)

    spec = RunSpec(env="ledger", policy="oracle", tasks=TASKS, out=tmp_path, concurrency=3)
    result = asyncio.run(run(spec, Slow(fail)))
    s = result.summary
    assert s["infra_stopped"] and "2 different tasks" in s["infra_stopped"]
    assert s["episodes"] + s["infra_errors"] == len(TASKS)
    assert any("not run" in e or "cut short" in e for e in result.errors)


def test_an_executor_that_goes_down_ends_the_run_and_resume_finishes_it(
    tmp_path: Path,
) -> None:
    spec = RunSpec(env="ledger", policy="oracle", tasks=TASKS, out=tmp_path)
    jobs = spec.job_list()
    cut = jobs[3].key

    def fail(job: Job, n: int) -> InfraError | None:
        return ExecutorDown("the cluster is gone") if job.key == cut else None

    with pytest.raises(ExecutorDown, match="cluster is gone"):
        asyncio.run(run(spec, Flaky(fail)))
    assert keys(tmp_path) == [j.key for j in jobs[:3]]  # everything before it is on disk
    resumed = asyncio.run(run(spec.model_copy(update={"resume": True}), Flaky(lambda j, n: None)))
    assert resumed.summary["resumed"] == 3 and resumed.summary["episodes"] == len(TASKS)
    assert sorted(keys(tmp_path)) == sorted(j.key for j in jobs)
