"""The runner: groups, retries of infrastructure failures, timeouts, resume after a crash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import ContextLengthExceeded, InfraError, IntegrityError, UserError
from gymforge.core.types import Observation
from gymforge.envs import make_env
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import (
    EpisodeContext,
    LocalExecutor,
    OraclePolicy,
    PolicyTurn,
    RandomPolicy,
    RunSpec,
    expand,
    run,
)
from gymforge.rollout.replay import replay_file
from gymforge.trajectory.io import read_episodes, recover_finished, verify_chain

PAIRS = [(t, 5) for t in LedgerEnv.tasks.sample(4, 0)]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_groups_expand_with_distinct_sampling_seeds(tmp_path: Path) -> None:
    jobs = expand(PAIRS, group=3)
    assert len(jobs) == 12 and [j.rollout for j in jobs[:3]] == [0, 1, 2]
    assert len({j.sampling_seed for j in jobs}) == 12
    seen: list[tuple[str, int, int]] = []

    class Recorder(RandomPolicy):
        async def start(self, ctx: EpisodeContext) -> None:
            seen.append((ctx.task_id, ctx.rollout, ctx.sampling_seed))
            await super().start(ctx)

    result = asyncio.run(
        run(
            RunSpec(
                env="ledger", policy="Recorder", jobs=PAIRS, out=tmp_path, group=3, concurrency=4
            ),
            LocalExecutor(LedgerEnv, Recorder),
        )
    )
    assert result.summary["episodes"] == 12 and result.summary["groups"] == 4
    assert sorted(seen) == sorted((j.task_id, j.rollout, j.sampling_seed) for j in jobs)
    steps = [r for r in lines(tmp_path / "trajectories.jsonl") if r["record"] == "step"]
    assert {(r["rollout"], r["sampling_seed"]) for r in steps} == {
        (j.rollout, j.sampling_seed) for j in jobs
    }


def test_zero_variance_groups_are_flagged(tmp_path: Path) -> None:
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS, group=2),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    s = result.summary
    assert s["zero_variance_groups"] == 4 and len(s["zero_variance_examples"]) == 4
    assert s["mean_group_reward_std"] == 0.0


class FlakyPolicy(OraclePolicy):
    """Fails its first ``failures`` episodes at the second step, like a dropped server."""

    failures = 2
    started = 0

    async def start(self, ctx: EpisodeContext) -> None:
        type(self).started += 1
        self.broken = type(self).started <= self.failures
        self.n = 0
        await super().start(ctx)

    async def act(self, observation: Observation) -> PolicyTurn:
        self.n += 1
        if self.broken and self.n == 2:
            raise ConnectionError("server went away")
        return await super().act(observation)


def test_infra_failures_are_retried_and_never_scored(tmp_path: Path) -> None:
    FlakyPolicy.started = 0
    result = asyncio.run(
        run(
            RunSpec(
                env="ledger", policy="FlakyPolicy", jobs=PAIRS[:2], out=tmp_path, max_retries=2
            ),
            LocalExecutor(LedgerEnv, FlakyPolicy),
        )
    )
    s = result.summary
    assert s["episodes"] == 2 and s["success_rate"] == 1.0
    assert s["infra_retries"] == 2 and s["infra_errors"] == 0
    for log in read_episodes(tmp_path / "trajectories.jsonl"):
        verify_chain(log)  # only whole, successful episodes were written
    FlakyPolicy.started = 0
    FlakyPolicy.failures = 10
    try:
        failed = asyncio.run(
            run(
                RunSpec(env="ledger", policy="FlakyPolicy", jobs=PAIRS[:1], max_retries=1),
                LocalExecutor(LedgerEnv, FlakyPolicy),
            )
        )
    finally:
        FlakyPolicy.failures = 2
    assert failed.summary["episodes"] == 0 and failed.summary["infra_errors"] == 1
    assert "server went away" in failed.errors[0]


class SlowPolicy(OraclePolicy):
    async def act(self, observation: Observation) -> PolicyTurn:
        await asyncio.sleep(10)
        return await super().act(observation)


def test_episode_timeout_is_an_infra_failure() -> None:
    result = asyncio.run(
        run(
            RunSpec(
                env="ledger",
                policy="SlowPolicy",
                jobs=PAIRS[:1],
                episode_timeout=0.05,
                max_retries=1,
            ),
            LocalExecutor(LedgerEnv, SlowPolicy),
        )
    )
    assert result.summary["episodes"] == 0 and result.summary["infra_errors"] == 1
    assert "timeout" in result.errors[0]


class StallAfterActing(OraclePolicy):
    """Acts once (the oracle's first action), then never again within the budget."""

    turns = 0

    async def act(self, observation: Observation) -> PolicyTurn:
        self.turns += 1
        if self.turns > 1:
            await asyncio.sleep(10)
        return await super().act(observation)


def test_an_episode_past_its_timeout_after_acting_is_a_counted_failure(tmp_path: Path) -> None:
    result = asyncio.run(
        run(
            RunSpec(
                env="ledger",
                policy="StallAfterActing",
                jobs=PAIRS[:1],
                episode_timeout=1.0,
                max_retries=1,
                out=tmp_path,
            ),
            LocalExecutor(LedgerEnv, StallAfterActing),
        )
    )
    s = result.summary
    assert s["episodes"] == 1 and s["success_rate"] == 0.0 and s["infra_errors"] == 0, s
    assert s["infra_retries"] == 0 and s["truncated"] == 1
    (log,) = read_episodes(tmp_path / "trajectories.jsonl")
    verify_chain(log)
    assert log.end is not None
    assert log.end.failure_reason == "episode_timeout" and log.end.steps == 1


class DeadServer(OraclePolicy):
    """A policy server that serves the first task and then is gone: rollout 0 of any
    other task fails at once (connection refused), later rollouts hang (a dead connection)."""

    async def start(self, ctx: EpisodeContext) -> None:
        self.dead = ctx.task_id != PAIRS[0][0]
        self.hang = ctx.rollout > 0
        await super().start(ctx)

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.dead and self.hang:
            await asyncio.Event().wait()
        if self.dead:
            raise ConnectionError("server went away")
        return await super().act(observation)


async def bounded(coro: Any, seconds: float = 30.0) -> Any:
    async with asyncio.timeout(seconds):  # a run that does not stop fails, not hangs
        return await coro


def test_a_dead_server_stops_the_run_and_resume_runs_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    stopped = asyncio.run(
        bounded(
            run(
                RunSpec(
                    env="ledger",
                    policy="DeadServer",
                    jobs=PAIRS,
                    out=tmp_path,
                    group=2,
                    concurrency=3,
                ),
                LocalExecutor(LedgerEnv, DeadServer),
            )
        )
    )
    s = stopped.summary
    assert s["episodes"] == 2 and s["success_rate"] == 1.0 and s["failure_reasons"] == {}
    assert s["infra_errors"] == 6 == len(stopped.errors)  # every episode not written
    assert "2 different tasks" in s["infra_stopped"]
    assert sum("cut short" in e for e in stopped.errors) >= 1  # the hung episodes
    assert sum(": not run:" in e for e in stopped.errors) >= 2  # the jobs never started
    assert {(e.end.task_id, e.end.rollout) for e in read_episodes(path) if e.end} == {
        (PAIRS[0][0], 0),
        (PAIRS[0][0], 1),
    }
    written = path.read_bytes()
    resumed = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS, out=tmp_path, group=2, resume=True),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    s = resumed.summary
    assert s["resumed"] == 2 and s["episodes"] == 8 and s["infra_errors"] == 0
    assert s["infra_stopped"] is None and path.read_bytes().startswith(written)
    episodes = read_episodes(path)
    keys = [(e.end.task_id, e.end.rollout) for e in episodes if e.end]
    assert len(keys) == len(set(keys)) == 8
    for log in episodes:
        verify_chain(log)


class OneTaskDown(OraclePolicy):
    async def start(self, ctx: EpisodeContext) -> None:
        if ctx.task_id == PAIRS[1][0]:
            raise ConnectionError("this task's sandbox is down")
        await super().start(ctx)


def test_one_task_failing_every_rollout_does_not_stop_the_run() -> None:
    result = asyncio.run(
        bounded(
            run(
                RunSpec(
                    env="ledger",
                    policy="OneTaskDown",
                    jobs=PAIRS,
                    group=3,
                    concurrency=2,
                    max_retries=1,
                ),
                LocalExecutor(LedgerEnv, OneTaskDown),
            )
        )
    )
    s = result.summary
    assert s["episodes"] == 9 and s["infra_errors"] == 3 and s["infra_stopped"] is None
    unstoppable = asyncio.run(
        run(
            RunSpec(
                env="ledger",
                policy="DeadServer",
                jobs=PAIRS,
                max_retries=0,
                stop_after_failed_tasks=None,
            ),
            LocalExecutor(LedgerEnv, DeadServer),
        )
    )
    assert unstoppable.summary["episodes"] == 1 and unstoppable.summary["infra_errors"] == 3
    assert unstoppable.summary["infra_stopped"] is None
    assert not any("not run" in e for e in unstoppable.errors)


def test_weight_version_is_stamped(tmp_path: Path) -> None:
    version = {"v": 3}

    class Versioned(OraclePolicy):
        def weight_version(self) -> int:
            return version["v"]

    asyncio.run(
        run(
            RunSpec(env="ledger", policy="Versioned", jobs=PAIRS[:1], out=tmp_path),
            LocalExecutor(LedgerEnv, Versioned),
        )
    )
    version["v"] = 4
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="Versioned", jobs=PAIRS[1:2], out=tmp_path, resume=True),
            LocalExecutor(LedgerEnv, Versioned),
        )
    )
    stamps = {(r["task_id"], r["weight_version"]) for r in lines(tmp_path / "trajectories.jsonl")}
    assert stamps == {(PAIRS[0][0], "3"), (PAIRS[1][0], "4")}


def test_resume_after_a_crash_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    first = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS[:2], out=tmp_path, group=2),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    assert first.summary["episodes"] == 4
    intact = path.read_bytes()
    with open(path, "ab") as fh:  # the crash: half of the next episode, torn mid-line
        fh.write(intact.splitlines(keepends=True)[0])
        fh.write(b'{"record":"step","run_id":"x","epis')
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS, out=tmp_path, group=2, resume=True),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    s = result.summary
    assert s["resumed"] == 4 and s["episodes"] == 8
    episodes = read_episodes(path)
    keys = [(e.end.task_id, e.end.seed, e.end.rollout) for e in episodes if e.end]
    assert len(keys) == 8 and len(set(keys)) == 8
    assert path.read_bytes().startswith(intact)
    for log in episodes:
        verify_chain(log)
    again = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS, out=tmp_path, group=2, resume=True),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    assert again.summary["resumed"] == 8 and len(read_episodes(path)) == 8
    assert json.loads((tmp_path / "summary.json").read_text())["episodes"] == 8


def test_resume_refuses_damage_before_finished_episodes(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS[:2], out=tmp_path),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    text = path.read_text().splitlines(keepends=True)
    text[1] = text[1][: len(text[1]) // 2] + "\n"
    path.write_text("".join(text))
    with pytest.raises(IntegrityError, match="refusing to truncate"):
        recover_finished(path)


class ContextFills(OraclePolicy):
    """The model's context window fills up at the third turn."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.n = 0

    async def act(self, observation: Observation) -> PolicyTurn:
        self.n += 1
        if self.n == 3:
            raise ContextLengthExceeded("maximum context length exceeded", prompt_tokens=9)
        return await super().act(observation)


def test_a_full_context_window_truncates_the_episode(tmp_path: Path) -> None:
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="ContextFills", jobs=PAIRS[:2], out=tmp_path),
            LocalExecutor(LedgerEnv, ContextFills),
        )
    )
    s = result.summary
    assert s["episodes"] == 2 and s["truncated"] == 2 and s["terminated"] == 0
    assert s["failure_reasons"] == {"context_length": 2} and s["infra_errors"] == 0
    for log in read_episodes(tmp_path / "trajectories.jsonl"):
        verify_chain(log)
        assert log.end is not None and log.end.steps == 2 and not log.end.success
    assert asyncio.run(replay_file(tmp_path / "trajectories.jsonl", make_env)).ok


class Refused(OraclePolicy):
    async def act(self, observation: Observation) -> PolicyTurn:
        err = InfraError("400 unknown model")
        err.retryable = False
        raise err


def test_a_refused_request_stops_the_run_instead_of_retrying() -> None:
    with pytest.raises(UserError, match="refused"):
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="Refused", jobs=PAIRS, max_retries=5),
                LocalExecutor(LedgerEnv, Refused),
            )
        )
