"""The Redis executor and its workers against a real ``redis-server`` on 127.0.0.1
(ephemeral port), through the one runner."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

redis = pytest.importorskip("redis")

from redis_helpers import REDIS_SERVER, redis_server, unacked  # noqa: E402

from gymforge.envs.ledger import LedgerEnv  # noqa: E402
from gymforge.rollout.executors.redis import RedisExecutor  # noqa: E402
from gymforge.rollout.executors.redis_worker import (  # noqa: E402
    Streams,
    connect,
    run_task,
    worker,
)
from gymforge.rollout.jobs import Job, expand  # noqa: E402
from gymforge.rollout.runner import RunResult, run  # noqa: E402
from gymforge.rollout.spec import RunSpec  # noqa: E402
from gymforge.trajectory.check import check_file  # noqa: E402
from gymforge.trajectory.io import read_episodes, verify_chain  # noqa: E402

SEAL_KEY = b"redis coordinator seal key"

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


JOBS = expand([(t, 3) for t in LedgerEnv.tasks.sample(20, 0)], group=2)  # 40 jobs


async def run_redis(
    url: str,
    jobs: list[Job],
    out: Path,
    *,
    seal_key: bytes | None = None,
    concurrency: int = 1,
    **executor: Any,
) -> RunResult:
    """The ledger oracle's ``jobs`` through the runner on a ``RedisExecutor`` at ``url``."""
    spec = RunSpec(
        env="ledger",
        policy="oracle",
        backend="redis",
        jobs=jobs,
        out=out,
        seal_key=seal_key,
        concurrency=concurrency,
    )
    return await run(spec, RedisExecutor(url, **executor))


def check_output(out: Path, n: int) -> None:
    logs = read_episodes(out / "trajectories.jsonl")
    assert len(logs) == n
    assert len({log.episode_id for log in logs}) == n
    keys = {(log.end.task_id, log.end.seed, log.end.rollout) for log in logs if log.end}
    assert keys == {j.key for j in JOBS}
    for log in logs:
        verify_chain(log)


def test_forty_jobs_through_two_workers(redis_url: str, tmp_path: Path) -> None:
    async def main() -> tuple[dict, list[int], int]:
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(
                worker(
                    redis_url, consumer=f"w{i}", block_ms=100, reclaim_idle_ms=2000, stop_event=stop
                )
            )
            for i in range(2)
        ]
        try:
            result = await run_redis(
                redis_url,
                JOBS,
                tmp_path,
                block_ms=100,
                timeout_s=45,
                idle_timeout_s=20,
                seal_key=SEAL_KEY,
            )
        finally:
            stop.set()
            counts = await asyncio.wait_for(asyncio.gather(*workers), 10)
        return result.summary, counts, await unacked(redis_url)

    summary, counts, pending = asyncio.run(main())
    assert summary["episodes"] == 40 and summary["success_rate"] == 1.0
    assert summary["infra_errors"] == 0 and summary["backend"] == "redis"
    assert sum(counts) == 40 and pending == 0
    check_output(tmp_path, 40)
    sealed = check_file(tmp_path / "trajectories.jsonl", SEAL_KEY)  # the coordinator sealed
    assert sealed.finished and sealed.run_seals == 1 and len(sealed.episodes) == 40


def test_dead_workers_job_is_reclaimed(
    redis_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gymforge.redis")

    async def main() -> tuple[dict, list[int], int, list[str]]:
        streams = Streams()
        coordinator = asyncio.create_task(
            run_redis(
                redis_url,
                JOBS,
                tmp_path,
                block_ms=100,
                timeout_s=45,
                idle_timeout_s=20,
            )
        )
        # a worker that takes two jobs and dies without acking them
        dead = connect(redis_url)
        deadline = time.monotonic() + 10
        while await dead.xlen(streams.tasks) < 2:  # the window of concurrency 1
            assert time.monotonic() < deadline, "tasks were never queued"
            await asyncio.sleep(0.02)
        taken = await dead.xreadgroup(streams.group, "dead", {streams.tasks: ">"}, count=2)
        taken_ids = [entry_id for _s, entries in taken for entry_id, _f in entries]
        await dead.aclose()
        assert len(taken_ids) == 2
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(
                worker(
                    redis_url,
                    consumer=f"live{i}",
                    block_ms=100,
                    # Only the dead worker's jobs may be taken over: a live worker's heartbeat
                    # (every third of this) must never be missed for all of it. At 500 ms, a
                    # test process stalled for half a second on a busy machine had one live
                    # worker take over the other's running job ("took over" a third id).
                    reclaim_idle_ms=3000,
                    stop_event=stop,
                )
            )
            for i in range(2)
        ]
        try:
            result = await coordinator
        finally:
            stop.set()
            counts = await asyncio.wait_for(asyncio.gather(*workers), 10)
        return result.summary, counts, await unacked(redis_url), taken_ids

    summary, counts, pending, taken = asyncio.run(main())
    reclaimed = {r.args[1] for r in caplog.records if "took over" in r.getMessage()}
    assert reclaimed == set(taken)  # XAUTOCLAIM handed both to the live workers
    assert summary["episodes"] == 40 and summary["success_rate"] == 1.0
    assert sum(counts) == 40 and pending == 0  # the live workers did all 40, dead one's too
    check_output(tmp_path, 40)


def test_a_job_finished_twice_is_written_once(redis_url: str, tmp_path: Path) -> None:
    """At-least-once delivery: a reclaimed job whose first worker was only slow posts two
    results; the coordinator keeps the first and the file holds each episode once."""
    jobs = JOBS[:4]

    async def main() -> dict:
        streams = Streams()
        coordinator = asyncio.create_task(
            run_redis(
                redis_url,
                jobs,
                tmp_path,
                block_ms=100,
                timeout_s=30,
                seal_key=SEAL_KEY,
                concurrency=2,  # a window of all four
            )
        )
        r = connect(redis_url)
        try:
            deadline = time.monotonic() + 10
            while await r.xlen(streams.tasks) < len(jobs):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            taken = await r.xreadgroup(streams.group, "manual", {streams.tasks: ">"}, count=4)
            entries = [e for _s, es in taken for e in es]
            for n, (entry_id, fields) in enumerate(entries):
                for _ in range(2 if n == 0 else 1):  # job 0 finishes twice
                    await r.xadd(fields["result_stream"], await run_task(fields))
                await r.xack(streams.tasks, streams.group, entry_id)
        finally:
            await r.aclose()
        return (await coordinator).summary

    summary = asyncio.run(main())
    assert summary["episodes"] == 4 and summary["duplicate_results"] == 1
    logs = read_episodes(tmp_path / "trajectories.jsonl")
    assert len(logs) == 4 and len({log.episode_id for log in logs}) == 4
    for log in logs:
        verify_chain(log)
    sealed = check_file(tmp_path / "trajectories.jsonl", SEAL_KEY)  # a duplicate seals once
    assert sealed.finished and len(sealed.episodes) == 4


def test_a_run_without_workers_times_out(redis_url: str, tmp_path: Path) -> None:
    from gymforge.core.errors import InfraError

    with pytest.raises(InfraError, match="no result"):
        asyncio.run(run_redis(redis_url, JOBS[:2], tmp_path, block_ms=100, idle_timeout_s=0.5))


def test_cli_run_with_redis_backend_and_a_worker_process(redis_url: str, tmp_path: Path) -> None:
    import json
    import signal
    import sys

    cli = [sys.executable, "-m", "gymforge.cli"]
    workers = subprocess.Popen(
        [*cli, "worker", "--redis", redis_url, "-c", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run = subprocess.run(
            [
                *cli,
                "run",
                "ledger",
                "--backend",
                "redis",
                "--redis",
                redis_url,
                "-n",
                "6",
                "-g",
                "2",
                "--out",
                str(tmp_path),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert run.returncode == 0, run.stderr
        summary = json.loads(run.stdout)
        assert summary["episodes"] == 12 and summary["success_rate"] == 1.0
        assert summary["backend"] == "redis"
        logs = read_episodes(tmp_path / "trajectories.jsonl")
        for log in logs:
            verify_chain(log)
        assert len({(lg.steps[0].task_id, lg.steps[0].rollout) for lg in logs}) == 12
        replay = subprocess.run(
            [*cli, "replay", str(tmp_path / "trajectories.jsonl")],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert replay.returncode == 0, replay.stderr
    finally:
        workers.send_signal(signal.SIGTERM)
        try:
            _, stderr = workers.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            workers.kill()
            raise
    assert workers.returncode == 0, stderr
    assert "processed 12 tasks" in stderr


def test_task_entries_carry_the_policy_settings_to_the_worker() -> None:
    """--max-tokens/--temperature/--top-p and the token-in options reach a redis worker's
    policy, not only the local and Ray runners' (they were silently dropped)."""
    from gymforge.rollout.executors.redis_worker import WorkerResources, task_fields

    options = {"max_tokens": 7, "temperature": 0.5, "tool_format": "hermes"}
    [job] = expand([("t", 0)], 1)
    fields = task_fields(
        job,
        0,
        env_ref="ledger",
        policy_spec="vllm:m",
        run_id="r",
        result_stream="s",
        policy_options={**options, "base_url": "http://127.0.0.1:9/v1"},
    )
    from gymforge.registry.handle import open_env

    source = asyncio.run(
        WorkerResources().policy(
            fields["policy"], fields["base_url"], fields["policy_options"], open_env("ledger")
        )
    )
    made: Any = source.factory
    assert (made.sampling.max_tokens, made.sampling.temperature) == (7, 0.5)
    assert made.tool_format == "hermes"
    plain = task_fields(
        job, 0, env_ref="ledger", policy_spec="oracle", run_id="r", result_stream="s"
    )
    assert "policy_options" not in plain


GATED_ENV = '''
import asyncio, os
from gymforge.envs.ledger import LedgerEnv


class GatedLedger(LedgerEnv):
    """The ledger, whose reset waits while the gate file exists (at most 60 s)."""

    async def reset(self, task_id, seed):
        for _ in range(3000):
            if not os.path.exists(GATE):
                break
            await asyncio.sleep(0.02)
        return await super().reset(task_id, seed)
'''


def test_a_worker_killed_mid_episode_loses_nothing(redis_url: str, tmp_path: Path) -> None:
    """A real worker process takes two jobs, is SIGKILLed while both are mid-episode, and a
    second worker takes them over: every job is written exactly once, the chains verify."""
    import json
    import os
    import signal
    import sys

    gate = tmp_path / "gate"
    gate.write_text("hold")
    env_file = tmp_path / "gated_env.py"
    env_file.write_text(f"GATE = {str(gate)!r}\n" + GATED_ENV)
    env_ref = f"{env_file}:GatedLedger"
    cli = [sys.executable, "-m", "gymforge.cli"]
    out = tmp_path / "run"
    args = ["--backend", "redis", "--redis", redis_url, "-n", "4", "-g", "2", "--out", str(out)]
    run = subprocess.Popen(
        [*cli, "run", env_ref, *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    doomed = subprocess.Popen(
        [*cli, "worker", "--redis", redis_url, "-c", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    rescuer: subprocess.Popen[str] | None = None
    try:
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        streams = Streams()
        deadline = time.monotonic() + 60
        held: list[Any] = []
        while len(held) < 2:  # both of the doomed worker's slots are inside a gated reset
            assert time.monotonic() < deadline, "the worker never took two jobs"
            assert doomed.poll() is None and run.poll() is None
            try:
                held = client.xpending_range(streams.tasks, streams.group, "-", "+", 10)
            except redis.exceptions.ResponseError:  # the group is not made yet
                held = []
            time.sleep(0.05)
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=10)
        gate.unlink()
        rescuer = subprocess.Popen(
            [*cli, "worker", "--redis", redis_url, "-c", "2", "--reclaim-idle", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        stdout, stderr = run.communicate(timeout=240)
        assert run.returncode == 0, stderr
        summary = json.loads(stdout)
        assert summary["episodes"] == 8 and summary["success_rate"] == 1.0
        logs = read_episodes(out / "trajectories.jsonl")
        assert len(logs) == 8
        keys = [(lg.steps[0].task_id, lg.steps[0].seed, lg.steps[0].rollout) for lg in logs]
        assert len(set(keys)) == 8  # the killed worker's two jobs exactly once each
        for log in logs:
            verify_chain(log)
        assert client.xpending(streams.tasks, streams.group)["pending"] == 0
        client.close()
        rescuer.send_signal(signal.SIGTERM)
        _, said = rescuer.communicate(timeout=30)
        assert said.count("took over") >= 1, said  # the dead worker's jobs, by XAUTOCLAIM
    finally:
        for p in (run, doomed):
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        if rescuer is not None:
            rescuer.send_signal(signal.SIGTERM)
            try:
                rescuer.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                rescuer.kill()
                rescuer.wait(timeout=10)


def test_a_hundred_and_one_episodes_through_the_redis_executor(
    redis_url: str, tmp_path: Path
) -> None:
    """Past redis-py's 100-connection pool: 101 jobs of the cheap ``digits`` oracle through
    the runner and two workers. Pushing every task at once opened a connection per queued
    task and failed with ``MaxConnectionsError``; the executor keeps a bounded window."""
    from gymforge.envs.digits import DigitsEnv

    jobs = expand([(t, 0) for t in DigitsEnv.tasks.sample(101, 0)], group=1)

    async def main() -> tuple[dict, int]:
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(worker(redis_url, consumer=f"w{i}", block_ms=100, stop_event=stop))
            for i in range(2)
        ]
        try:
            spec = RunSpec(
                env="digits",
                policy="oracle",
                backend="redis",
                jobs=jobs,
                concurrency=4,
                out=tmp_path,
                seal_key=SEAL_KEY,
            )
            executor = RedisExecutor(redis_url, block_ms=100, timeout_s=60, idle_timeout_s=20)
            result = await run(spec, executor)
        finally:
            stop.set()
            counts = await asyncio.wait_for(asyncio.gather(*workers), 10)
        return result.summary, sum(counts)

    summary, processed = asyncio.run(main())
    assert summary["episodes"] == 101 and summary["success_rate"] == 1.0
    assert summary["infra_errors"] == 0 and processed == 101
    assert summary["tasks_queued"] == 101 and summary["duplicate_results"] == 0
    assert 1 <= summary["peak_in_flight"] <= 8  # the window: twice the concurrency of 4
    logs = read_episodes(tmp_path / "trajectories.jsonl")
    assert len({(lg.end.task_id, lg.end.rollout) for lg in logs if lg.end}) == 101
    for log in logs:
        verify_chain(log)
    sealed = check_file(tmp_path / "trajectories.jsonl", SEAL_KEY)
    assert sealed.finished and len(sealed.episodes) == 101


def test_a_resumed_redis_run_queues_only_the_missing_jobs(redis_url: str, tmp_path: Path) -> None:
    """Resume through the window: a second run over the same directory queues only the jobs
    the first did not write, and the file ends with every job once, seals intact."""

    async def main() -> tuple[dict, dict]:
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(worker(redis_url, consumer=f"w{i}", block_ms=100, stop_event=stop))
            for i in range(2)
        ]
        try:
            first = await run_redis(
                redis_url, JOBS[:15], tmp_path, seal_key=SEAL_KEY, concurrency=2, block_ms=100
            )
            spec = RunSpec(
                env="ledger",
                policy="oracle",
                backend="redis",
                jobs=JOBS,
                out=tmp_path,
                seal_key=SEAL_KEY,
                concurrency=2,
                resume=True,
            )
            second = await run(spec, RedisExecutor(redis_url, block_ms=100, timeout_s=60))
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*workers), 10)
        return first.summary, second.summary

    first, second = asyncio.run(main())
    assert first["episodes"] == 15 and first["tasks_queued"] == 15
    assert second["resumed"] == 15 and second["tasks_queued"] == 25
    assert second["episodes"] == 40 and second["peak_in_flight"] <= 4
    check_output(tmp_path, 40)
    sealed = check_file(tmp_path / "trajectories.jsonl", SEAL_KEY)
    assert sealed.finished and len(sealed.episodes) == 40
