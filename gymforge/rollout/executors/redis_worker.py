"""Redis workers: ``gymforge worker --redis URL`` plays the attempts a ``RedisExecutor``
queues.

Layout (``prefix`` defaults to ``gymforge``):

- ``{prefix}:tasks`` — one entry per attempt of a job (env ref, policy spec, task, seed,
  rollout, index, attempt, run id, result stream), read by workers through the consumer
  group ``{prefix}:workers`` (XREADGROUP). A worker plays the attempt, XADDs its records (or
  its failure) to the run's result stream, then XACKs (and XDELs) the task.
  Entries a dead worker took and never acked are taken over by the others with XAUTOCLAIM
  once idle for ``reclaim_idle_ms``; a live worker keeps its running entry fresh with a
  JUSTID XCLAIM heartbeat (which leaves the entry's delivery count alone). An entry taken
  over ``max_reclaims`` times (default ``MAX_RECLAIMS``, 2) is given up by the next worker
  that takes it: it posts an ``abandoned`` result and acks, so a job that kills every worker
  playing it costs at most ``max_reclaims + 1`` of them; unless every one of them died after
  the agent acted (``{prefix}:taken:{entry id}:*``, ``redis_deaths``), when the job is
  played as the probe (its reset, the last taker's actions but the one it died on) and the
  episode ends there, counted. An exception the attempt's own code
  raises never ends a worker: it is the attempt's result, judged by the one rule
  (``redis_entries``: a bug stops the run with its traceback, as on the local executor),
  and the entry is acked, never reclaimed.
- ``{prefix}:results:{run_id}`` — one entry per finished attempt, read by the executor.
- ``{prefix}:done:{run_id}`` — set when a run is over, so workers skip its leftover tasks.

Delivery is at-least-once (a reclaimed attempt of a slow worker can finish twice); the
executor uses the first result of each attempt. Workers play one attempt per entry and
never retry: retries are the runner's. They never write trajectories or hold the seal key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.core.types import Action
from gymforge.registry.handle import EnvHandle, open_env
from gymforge.rollout.executors.base import play_attempt
from gymforge.rollout.executors.redis_deaths import (
    StoppedPolicy,
    Takers,
    deliveries,
    keeps_actions,
    record_steps,
)
from gymforge.rollout.executors.redis_entries import (
    MAX_RECLAIMS,
    abandoned_fields,
    failure_fields,
    job_key,
    result_head,
    task_fields,
)
from gymforge.rollout.jobs import Job
from gymforge.rollout.resolve import PolicySource, resolve_policy, with_harness_shell

try:
    import redis.asyncio as aioredis
    from redis.exceptions import RedisError, ResponseError
except ImportError:  # pragma: no cover - exercised only without the extra
    aioredis = None  # type: ignore[assignment]
    RedisError = ResponseError = Exception  # type: ignore[assignment,misc]

__all__ = [
    "CONNECTIONS_PER_WORKER",
    "DEFAULT_PREFIX",
    "DONE_TTL_S",
    "MAX_RECLAIMS",
    "RedisError",
    "Streams",
    "WorkerResources",
    "connect",
    "ensure_group",
    "job_key",
    "run_task",
    "task_fields",
    "worker",
]

log = logging.getLogger("gymforge.redis")

DEFAULT_PREFIX = "gymforge"
DONE_TTL_S = 7 * 24 * 3600
CONNECTIONS_PER_WORKER = 2
"""A worker's blocking read (or its episode's result and ack) and its heartbeat."""


@dataclass(frozen=True)
class Streams:
    """The key names under one prefix."""

    prefix: str = DEFAULT_PREFIX

    @property
    def tasks(self) -> str:
        return f"{self.prefix}:tasks"

    @property
    def group(self) -> str:
        return f"{self.prefix}:workers"

    def results(self, run_id: str) -> str:
        return f"{self.prefix}:results:{run_id}"

    def done(self, run_id: str) -> str:
        return f"{self.prefix}:done:{run_id}"


POOL_WAIT_S = 60.0
"""How long a command waits for a free pooled connection before it fails."""


def connect(url: str, max_connections: int = 2) -> Any:
    """A client whose pool holds at most ``max_connections`` connections: a command that
    finds them all busy waits (up to ``POOL_WAIT_S``) for one rather than opening another,
    so the connections a process holds follow its concurrency, never its queued work."""
    if aioredis is None:
        raise UserError("the redis backend needs the redis package: pip install 'gymforge[redis]'")
    try:
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max(1, max_connections), timeout=POOL_WAIT_S, decode_responses=True
        )
    except ValueError as err:  # the URL's scheme or form (redis parses it here, before I/O)
        raise UserError(f"bad Redis URL {url!r}: {err}") from None
    return aioredis.Redis.from_pool(pool)


async def ensure_group(r: Any, stream: str, group: str) -> None:
    """Create ``group`` on ``stream`` (and the stream) from its start; fine if it exists."""
    try:
        await r.xgroup_create(stream, group, id="0", mkstream=True)
    except ResponseError as err:
        if "BUSYGROUP" not in str(err):
            raise


class WorkerResources:
    """Env handles and policy sources, resolved once per worker process."""

    def __init__(self) -> None:
        self.envs: dict[tuple[str, str | None], EnvHandle] = {}
        self.policies: dict[tuple[str, str | None, str | None], PolicySource] = {}
        self._lock = asyncio.Lock()

    async def env(self, ref: str, dataset: str | None) -> EnvHandle:
        async with self._lock:
            key = (ref, dataset)
            if key not in self.envs:
                # open_env calls asyncio.run: keep it off this event loop
                path = Path(dataset) if dataset else None
                self.envs[key] = await asyncio.to_thread(open_env, ref, path)
            return self.envs[key]

    async def policy(
        self, spec: str, base_url: str | None, options: str | None, handle: EnvHandle
    ) -> PolicySource:
        """The policy of ``spec``, with the JSON-encoded ``options`` of the task entry (and,
        for a workspace harness, the shell tool of ``handle``'s environment)."""
        key = (spec, base_url, options)
        async with self._lock:
            if key not in self.policies:
                decoded = json.loads(options or "{}")
                # with_harness_shell closes its probe with asyncio.run: keep it off this loop
                made = await asyncio.to_thread(with_harness_shell, decoded, handle.factory)
                self.policies[key] = resolve_policy(spec, base_url, **made)
            return self.policies[key]

    async def close(self) -> None:
        for source in self.policies.values():
            if source.close is not None:
                with contextlib.suppress(Exception):
                    await source.close()


async def run_task(
    fields: dict[str, Any],
    resources: WorkerResources | None = None,
    *,
    record: Callable[[Action], Awaitable[Any]] | None = None,
    probe: list[Action] | None = None,
) -> dict[str, str]:
    """Play the attempt a task entry describes; return the result entry's fields: the
    records as JSON, or the failure (``error``, ``kind``: ``redis_entries``). Whatever the
    attempt's own code raises is its result, judged by the one rule, never the worker's end:
    an exception that is not gymforge's own is a ``bug``, reported with its traceback.
    ``record`` is awaited with each action before it reaches the environment; ``probe``
    plays the task with those actions instead of the policy's and ends it there, counted
    (``redis_deaths``)."""
    res = resources or WorkerResources()
    run_id = fields["run_id"]
    job = Job(int(fields["index"]), fields["task_id"], int(fields["seed"]), int(fields["rollout"]))
    result = result_head(fields)
    timeout = float(fields["episode_timeout_s"]) if fields.get("episode_timeout_s") else None
    env: Environment | None = None
    try:  # resolving the env and policy too: locally a bug there is one as well
        handle = await res.env(fields["env"], fields.get("dataset"))
        options = fields.get("policy_options")
        source = await res.policy(fields["policy"], fields.get("base_url"), options, handle)
        env = handle.factory()
        policy = source.factory()
        if probe is not None:
            policy = StoppedPolicy(policy, probe)
        elif record is not None:
            record_steps(env, record)
        records = await play_attempt(env, policy, job.keys(run_id, env, policy), timeout)
        return {**result, "records": json.dumps(records)}
    except Exception as err:  # retried, a mistake that stops the run, or a bug that does
        failure = failure_fields(err, result)
        if failure["kind"] == "bug":
            log.error("%s: attempt raised: %s", job.label, failure["error"], exc_info=err)
        else:
            log.warning("%s: attempt failed: %s", job.label, failure["error"])
        return failure
    finally:
        if env is not None:
            with contextlib.suppress(Exception):
                await env.close()


async def _heartbeat(
    r: Any, streams: Streams, consumer: str, entry_id: str, every_s: float
) -> None:
    """Keep a running entry's idle time low so other workers do not reclaim it."""
    while True:
        await asyncio.sleep(every_s)
        with contextlib.suppress(Exception):
            await r.xclaim(streams.tasks, streams.group, consumer, 0, [entry_id], justid=True)


async def worker(
    url: str,
    *,
    consumer: str | None = None,
    prefix: str = DEFAULT_PREFIX,
    group: str | None = None,
    block_ms: int = 1000,
    reclaim_idle_ms: int = 60_000,
    stop_event: asyncio.Event | None = None,
    max_jobs: int | None = None,
    resources: WorkerResources | None = None,
    client: Any = None,
    max_reclaims: int = MAX_RECLAIMS,
) -> int:
    """Process task entries until ``stop_event`` is set or ``max_jobs`` are done; return the
    number processed. Every wait is bounded by ``block_ms``, so a set ``stop_event`` is seen
    within that time. Entries idle longer than ``reclaim_idle_ms`` (a dead worker's) are
    taken over with XAUTOCLAIM, checked every ``reclaim_idle_ms / 2`` and whenever idle; one
    already taken over ``max_reclaims`` times is given up (an ``abandoned`` result), not
    played. Whatever an attempt raises is its result (``run_task``), never the worker's end.
    ``client`` (shared, left open) or a client of its own: a worker uses at most
    ``CONNECTIONS_PER_WORKER`` connections (its blocking read or episode, its heartbeat)."""
    streams = Streams(prefix)
    group = group or streams.group
    consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    res = resources or WorkerResources()
    own_resources = resources is None
    r = client if client is not None else connect(url, CONNECTIONS_PER_WORKER)
    done = 0
    cursor = "0-0"
    last_reclaim = 0.0
    reclaim_every = min(max(reclaim_idle_ms / 2000, 0.05), block_ms / 1000 + 1)

    async def play(
        entry_id: str,
        fields: dict[str, Any],
        takers: Takers,
        handed: int,
        probe: list[Action] | None = None,
    ) -> dict[str, str]:
        beat = asyncio.create_task(
            _heartbeat(r, streams, consumer, entry_id, max(reclaim_idle_ms / 3000, 0.05))
        )
        keep = keeps_actions(handed, max_reclaims)
        record = takers.recorder(handed, keep)
        try:
            return await run_task(fields, res, record=record, probe=probe)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def process(entry_id: str, fields: dict[str, Any], taken_over: bool = False) -> None:
        nonlocal done
        handed = 1
        takers = Takers(r, prefix, entry_id, DONE_TTL_S)
        if fields and not await r.exists(streams.done(fields.get("run_id", ""))):
            handed = await deliveries(r, streams.tasks, group, entry_id) if taken_over else 1
            probe = await takers.probe(handed) if handed > max_reclaims + 1 else None
            if isinstance(probe, list):  # every taker died after the agent acted: its failure
                log.error("%s ends task %s: died on the agent's action", consumer, entry_id)
                result = await play(entry_id, fields, takers, handed, probe)
            elif probe is None and handed > max_reclaims + 1:  # every taker died: no other
                log.error("%s gives up task %s: taken %d times", consumer, entry_id, handed)
                result = abandoned_fields(result_head(fields), handed, max_reclaims)
            else:  # within the reclaims; or NOT_KEPT (a first taker under a larger
                # --max-reclaims kept no actions): played on as a takeover, which keeps them
                result = await play(entry_id, fields, takers, handed)
            await r.xadd(fields["result_stream"], result)
        # result first, then ack (with the takers' keys, one round trip): a crash in between
        # repeats the job (deduplicated later)
        async with r.pipeline(transaction=False) as pipe:
            pipe.xack(streams.tasks, group, entry_id)
            pipe.xdel(streams.tasks, entry_id)
            pipe.delete(*takers.keys(handed))
            await pipe.execute()
        done += 1

    try:
        await ensure_group(r, streams.tasks, group)
        while (stop_event is None or not stop_event.is_set()) and (
            max_jobs is None or done < max_jobs
        ):
            if time.monotonic() - last_reclaim >= reclaim_every:
                reply = await r.xautoclaim(
                    streams.tasks, group, consumer, reclaim_idle_ms, start_id=cursor, count=1
                )
                cursor = str(reply[0]) if reply and reply[0] else "0-0"
                if cursor == "0-0":  # the whole pending list was scanned
                    last_reclaim = time.monotonic()
                claimed = reply[1] if reply else []
                for entry_id, fields in claimed:
                    if fields:
                        log.warning("%s took over abandoned task %s", consumer, entry_id)
                    await process(entry_id, fields or {}, taken_over=True)
                if claimed:
                    continue
            reply = await r.xreadgroup(
                group, consumer, {streams.tasks: ">"}, count=1, block=block_ms
            )
            for _stream, entries in reply or []:
                for entry_id, fields in entries:
                    await process(entry_id, fields or {})
    finally:
        if own_resources:
            await res.close()
        if client is None:
            await r.aclose()
    return done
