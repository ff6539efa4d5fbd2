"""``RedisExecutor``: episodes played by ``gymforge worker`` processes reading a Redis stream.

Each attempt of a job becomes one entry on the task stream (see
``gymforge.rollout.executors.redis_worker`` for the layout and the workers); a reader
task follows the run's result stream through the consumer group ``coordinator`` and hands
each result to the attempt waiting for it. A result for an attempt nobody waits for any
more (a reclaimed attempt that finished twice, one the runner gave up on) is counted in
``duplicate_results`` and dropped, so the runner sees each attempt once. Results are acked
after they are handed over; the runner writes them before the next loop turn.

Tasks stream through a bounded window: the runner keeps at most ``capacity`` attempts in
flight (``window``, by default ``WINDOW_PER_SLOT`` times the spec's ``concurrency``: one
playing and one queued behind it per worker slot) and queues the next job only once a
result has been handed over and written. So this process and the task stream hold a
window of a run's tasks, whatever its size. The summary says so: ``peak_in_flight`` (the
most attempts waiting at once) and ``peak_task_stream`` (the stream's length after each of
this run's XADDs: its peak while no other run adds; above the window by at most the entries
workers have answered but not yet deleted, one per worker slot). The client's pool holds
``concurrency + 1`` connections (the reader's blocking read; XADDs wait for a free one),
never one per queued task.

A failed attempt is raised as the local executor would have raised it
(``redis_entries.remote_failure``): a retryable ``InfraError``, a mistake (``Refused``), a
bug in the job's code (``WorkerBug``, with the worker's traceback: the run stops, the job is
never played again), or a task its workers kept dying with (``Abandoned``: given up).

``--concurrency`` of a Redis run is the number of episodes it keeps going across all its
workers: the total of the workers' ``-c``. ``idle_timeout_s`` without any result while
attempts wait, or ``timeout_s`` in all, ends the run with ``ExecutorDown``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from gymforge.core.errors import ConfigError, InfraError
from gymforge.rollout.executors.base import ExecutorDown, Records
from gymforge.rollout.executors.redis_entries import job_key, remote_failure, task_fields
from gymforge.rollout.executors.redis_worker import (
    DEFAULT_PREFIX,
    DONE_TTL_S,
    RedisError,
    Streams,
    connect,
    ensure_group,
)
from gymforge.rollout.jobs import Job
from gymforge.rollout.spec import RunSpec

log = logging.getLogger("gymforge.redis")

COORDINATOR_GROUP = "coordinator"
WINDOW_PER_SLOT = 2
"""Attempts on the stream per unit of the spec's ``concurrency``."""

Attempt = tuple[str, int, int, int]
"""A job key and the attempt number."""


class RedisExecutor:
    """Queue attempts for the workers at ``url`` and collect their results. The env and
    policy travel by name (the spec's ``env``, ``dataset`` and ``policy``), with
    ``policy_options`` (``base_url`` among them). ``window`` overrides the number of
    attempts on the stream at once (see the module docstring)."""

    name = "redis"

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        policy_options: dict[str, Any] | None = None,
        block_ms: int = 1000,
        timeout_s: float | None = 24 * 3600.0,
        idle_timeout_s: float | None = None,
        window: int | None = None,
    ) -> None:
        if window is not None and window < 1:
            raise ConfigError("the Redis executor's window must be at least 1")
        self.url, self.streams = url, Streams(prefix)
        self.policy_options = dict(policy_options or {})
        self.block_ms, self.timeout_s, self.idle_timeout_s = block_ms, timeout_s, idle_timeout_s
        self.window = window
        self.duplicates = 0
        self.queued = 0  # task entries this run added
        self.peak_in_flight = 0  # the most attempts waiting for a result at once
        self.peak_stream = 0  # the longest the task stream was after one of our XADDs
        self._r: Any = None
        self._spec: RunSpec | None = None
        self._run_id = ""
        self._attempts: dict[tuple[str, int, int], int] = {}
        self._waiting: dict[Attempt, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def results_key(self) -> str:
        return self.streams.results(self._run_id)

    def capacity(self, spec: RunSpec, jobs: int) -> int:
        return max(1, min(jobs, self.window or WINDOW_PER_SLOT * spec.concurrency))

    async def open(self, spec: RunSpec, run_id: str) -> None:
        self._spec, self._run_id = spec, run_id
        self._r = connect(self.url, spec.concurrency + 1)
        await ensure_group(self._r, self.results_key, COORDINATOR_GROUP)
        await ensure_group(self._r, self.streams.tasks, self.streams.group)
        self._reader = asyncio.create_task(self._read())

    async def play(self, job: Job) -> Records:
        assert self._spec is not None and self._reader is not None, "play before open"
        if self._reader.done():  # the reader gave up (timeout) or failed: say why
            self._reader.result()
            raise ExecutorDown("the redis result reader stopped")
        n = self._attempts[job.key] = self._attempts.get(job.key, -1) + 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[(*job.key, n)] = fut
        self.peak_in_flight = max(self.peak_in_flight, len(self._waiting))
        try:
            try:
                async with self._r.pipeline(transaction=False) as pipe:
                    pipe.xadd(self.streams.tasks, self._fields(job, n))
                    pipe.xlen(self.streams.tasks)  # the stream only grows here: its peak
                    _id, length = await pipe.execute()
            except RedisError as err:
                raise ExecutorDown(f"redis: cannot queue {job.label}: {err}") from err
            self.queued += 1
            self.peak_stream = max(self.peak_stream, int(length))
            fields = await fut
        finally:
            self._waiting.pop((*job.key, n), None)
        if "error" in fields:  # as the local executor would have raised it
            raise remote_failure(fields)
        records: Records = json.loads(fields["records"])
        del self._attempts[job.key]  # done: the runner never plays a finished job again
        return records

    def _fields(self, job: Job, attempt: int) -> dict[str, str]:
        assert self._spec is not None
        return task_fields(
            job,
            attempt,
            env_ref=self._spec.env,
            policy_spec=self._spec.policy,
            run_id=self._run_id,
            result_stream=self.results_key,
            dataset=self._spec.dataset,
            policy_options=self.policy_options,
            episode_timeout_s=self._spec.episode_timeout,
        )

    async def _read(self) -> None:
        """Hand results to their waiting attempts until ``close``; on a timeout, fail every
        waiting attempt with ``ExecutorDown``."""
        start = last = time.monotonic()
        try:
            while not self._closing:
                now = time.monotonic()
                if not self._waiting:
                    last = now  # nothing asked for: idle time does not count
                if self.timeout_s is not None and now - start > self.timeout_s:
                    raise ExecutorDown(
                        f"redis run {self._run_id}: {len(self._waiting)} attempts still "
                        f"without a result after {self.timeout_s} s"
                    )
                if self.idle_timeout_s is not None and now - last > self.idle_timeout_s:
                    raise ExecutorDown(
                        f"redis run {self._run_id}: no result for {self.idle_timeout_s} s; "
                        f"are workers running (gymforge worker --redis {self.url})?"
                    )
                reply = await self._r.xreadgroup(
                    COORDINATOR_GROUP,
                    "coordinator",
                    {self.results_key: ">"},
                    count=64,
                    block=self.block_ms,
                )
                ids: list[str] = []
                for _stream, entries in reply or []:
                    for entry_id, fields in entries:
                        ids.append(entry_id)
                        if self._deliver(fields or {}):
                            last = time.monotonic()
                if ids:
                    await self._r.xack(self.results_key, COORDINATOR_GROUP, *ids)
                    await self._r.xdel(self.results_key, *ids)
        except asyncio.CancelledError:
            raise
        except BaseException as err:
            failure = err if isinstance(err, InfraError) else ExecutorDown(f"redis: {err}")
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(failure)
            if not isinstance(err, Exception):
                raise

    def _deliver(self, fields: dict[str, Any]) -> bool:
        """Hand one result entry to its attempt; False for a duplicate or a stranger."""
        if fields.get("run_id") != self._run_id:
            return False
        fut = self._waiting.get((*job_key(fields), int(fields.get("attempt", 0))))
        if fut is None or fut.done():
            self.duplicates += 1
            return False
        if "error" in fields:
            log.warning("%s seed %s rollout %s: %s", *job_key(fields), fields["error"])
        fut.set_result(fields)
        return True

    async def close(self) -> None:
        if self._reader is not None:  # it sees the flag within one blocking read
            self._closing = True
            done, _ = await asyncio.wait([self._reader], timeout=self.block_ms / 1000 + 5)
            if not done:
                self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._r is None:
            return
        try:
            if self._run_id:
                await self._r.set(self.streams.done(self._run_id), "1", ex=DONE_TTL_S)
                await self._r.delete(self.results_key)
        finally:
            await self._r.aclose()
            self._r = None

    def stats(self) -> dict[str, Any]:
        return {
            "duplicate_results": self.duplicates,
            "tasks_queued": self.queued,
            "peak_in_flight": self.peak_in_flight,
            "peak_task_stream": self.peak_stream,
        }
