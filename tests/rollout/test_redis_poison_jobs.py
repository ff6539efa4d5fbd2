"""Poison jobs on the Redis backend, against a real ``redis-server`` on 127.0.0.1: a job whose
own code raises is that job's failure, judged as the local executor judges it (a bug stops
the run with its traceback, never replayed), and a job that kills every worker that takes
it is given up after a bounded number of reclaims instead of burning workers forever."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

redis = pytest.importorskip("redis")

from redis_helpers import REDIS_SERVER, redis_server, unacked  # noqa: E402

from gymforge.core.errors import GymforgeError  # noqa: E402
from gymforge.envs.ledger import LedgerEnv  # noqa: E402
from gymforge.rollout.executors.redis import RedisExecutor  # noqa: E402
from gymforge.rollout.executors.redis_worker import worker  # noqa: E402
from gymforge.rollout.jobs import Job, expand  # noqa: E402
from gymforge.rollout.runner import RunResult, run  # noqa: E402
from gymforge.rollout.spec import RunSpec  # noqa: E402

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")

POISON_ENV = '''
import os
from gymforge.envs.ledger import LedgerEnv


class PoisonLedger(LedgerEnv):
    """The ledger, except on task POISON: each reset of it is logged to PLAYS; then its
    first step raises (MODE "raise": a bug the agent's action triggers) or its reset ends
    the process (MODE "exit": a job that kills whichever worker plays it)."""

    async def reset(self, task_id, seed):
        self.poisoned = task_id == POISON
        if self.poisoned:
            with open(PLAYS, "a") as f:
                f.write(f"{os.getpid()}\\n")
            if MODE == "exit":
                os._exit(17)
        return await super().reset(task_id, seed)

    async def step(self, action):
        if self.poisoned:
            raise RuntimeError(f"ledger bug on task {POISON}")
        return await super().step(action)
'''


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def poison_env(tmp_path: Path, mode: str, poison: str) -> tuple[str, Path]:
    """The reference of a ``PoisonLedger`` poisoned on task ``poison``, and its plays log."""
    plays = tmp_path / "plays.log"
    source = tmp_path / f"poison_{mode}.py"
    head = f"POISON = {poison!r}\nPLAYS = {str(plays)!r}\nMODE = {mode!r}\n"
    source.write_text(head + POISON_ENV)
    return f"{source}:PoisonLedger", plays


def plays_of(plays: Path) -> int:
    return len(plays.read_text().splitlines()) if plays.exists() else 0


def spec_for(env_ref: str, jobs: list[Job], out: Path) -> RunSpec:
    return RunSpec(env=env_ref, policy="oracle", backend="redis", jobs=jobs, out=out, concurrency=1)


JOBS = expand([(t, 3) for t in LedgerEnv.tasks.sample(3, 0)], group=1)


def test_a_job_whose_environment_raises_stops_the_run_once(redis_url: str, tmp_path: Path) -> None:
    """The environment's step raises ``RuntimeError`` on one task: locally that is a bug,
    which stops the run with its traceback and is never retried. Before, the exception left
    the worker, which died with the job unacked; the next worker reclaimed it and died too,
    until no worker was left and the run waited for results that never came."""
    poison = JOBS[1].task_id
    env_ref, plays = poison_env(tmp_path, "raise", poison)

    async def main() -> tuple[BaseException | None, list[bool], list[object], int]:
        stop = asyncio.Event()
        # A reclaim window a stall of the test process cannot outlast (at 300 ms, a stall
        # while one worker played the poison job let the other take it over and play it
        # again); the old bug (the worker died, unacked) is still replayed well within the run.
        workers = [
            asyncio.create_task(
                worker(
                    redis_url, consumer=f"w{i}", block_ms=100, reclaim_idle_ms=3000, stop_event=stop
                )
            )
            for i in range(2)
        ]
        failure: BaseException | None = None
        try:
            executor = RedisExecutor(redis_url, block_ms=100, timeout_s=120, idle_timeout_s=10)
            await run(spec_for(env_ref, JOBS, tmp_path / "run"), executor)
        except Exception as err:
            failure = err
        finally:
            alive = [not w.done() for w in workers]
            stop.set()
            ended = await asyncio.wait_for(asyncio.gather(*workers, return_exceptions=True), 10)
        return failure, alive, ended, await unacked(redis_url)

    failure, alive, ended, pending = asyncio.run(main())
    assert failure is not None, "the run ended as if nothing failed"
    seen = (failure, plays_of(plays), alive)
    assert not isinstance(failure, GymforgeError), seen  # a bug, as on the local executor
    assert "RuntimeError" in str(failure) and f"ledger bug on task {poison}" in str(failure)
    assert plays_of(plays) == 1  # played once: never reclaimed, never retried
    assert alive == [True, True]  # the workers served on
    assert all(isinstance(n, int) for n in ended), ended
    assert pending == 0  # the poison entry was acked, not left for a reclaim


def test_a_job_that_kills_every_worker_is_given_up(redis_url: str, tmp_path: Path) -> None:
    """Real worker processes, started one after another: the poison job's reset ends the
    process (as exhausting memory would). Each death leaves it pending and the next worker
    reclaims it; after the default two reclaims (three deaths) the next worker gives it up
    with a clear error, and the run ends with the other job written and this one an
    infrastructure error, instead of killing every worker that ever starts."""
    jobs = JOBS[:2]
    poison = jobs[1].task_id
    env_ref, plays = poison_env(tmp_path, "exit", poison)
    cli = [sys.executable, "-m", "gymforge.cli", "worker", "--redis", redis_url]

    async def main() -> tuple[RunResult | None, list[int | None]]:
        executor = RedisExecutor(redis_url, block_ms=100, timeout_s=300)
        coordinator = asyncio.create_task(run(spec_for(env_ref, jobs, tmp_path / "run"), executor))
        codes: list[int | None] = []
        proc: asyncio.subprocess.Process | None = None
        try:
            for _ in range(6):  # bounded: three deaths are expected, six prove a loop
                proc = await asyncio.create_subprocess_exec(
                    *cli,
                    "--reclaim-idle",
                    "0.3",
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                exited = asyncio.create_task(proc.wait())
                first = asyncio.FIRST_COMPLETED
                await asyncio.wait({exited, coordinator}, timeout=120, return_when=first)
                if not exited.done():
                    exited.cancel()
                    break  # the worker lives on: the run ended (or the test's bound did)
                codes.append(proc.returncode)
                proc = None
            return (coordinator.result() if coordinator.done() else None), codes
        finally:
            if proc is not None and proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
            if not coordinator.done():
                coordinator.cancel()
                await asyncio.gather(coordinator, return_exceptions=True)

    result, codes = asyncio.run(main())
    assert codes == [17, 17, 17], f"workers that died: {codes}"
    assert result is not None, "the poison job was still queued after six workers died"
    assert plays_of(plays) == 3
    summary = result.summary
    assert summary["episodes"] == 1 and summary["infra_errors"] == 1
    assert summary["infra_retries"] == 0  # given up, never queued again as a fresh attempt
    [error] = result.errors
    assert poison in error and "3 times" in error, error
