"""Redis workers: ``gymforge worker --redis URL`` plays the attempts a ``RedisExecutor``
queues.

Layout (``prefix`` defaults to ``gymforge``):

- ``{prefix}:tasks`` — one entry per attempt of a job (env ref, policy spec, task, seed,
  rollout, index, attempt, run id, result stream), read by workers through the consumer
  group ``{prefix}:workers`` (XREADGROUP). A worker plays the attempt, XADDs its records (or
  its infrastructure error) to the run's result stream, then XACKs (and XDELs) the task.
  Entries a dead worker took and never acked are taken over by the others with XAUTOCLAIM
  once idle for ``reclaim_idle_ms``; a live worker keeps its running entry fresh with a
  JUSTID XCLAIM heartbeat.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.errors import InfraError, UserError
from gymforge.registry.handle import EnvHandle, open_env
from gymforge.rollout.executors.base import play_attempt
from gymforge.rollout.failures import worker_report
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
    "RedisError",
    "Streams",
    "connect",
    "ensure_group",
    "job_key",
    "run_task",
    "serve_workers",
    "task_fields",
    "worker",
    "worker_main",
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


def job_key(fields: dict[str, Any]) -> tuple[str, int, int]:
    return (fields["task_id"], int(fields["seed"]), int(fields["rollout"]))


class _Resources:
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


def task_fields(
    job: Job,
    attempt: int,
    *,
    env_ref: str,
    policy_spec: str,
    run_id: str,
    result_stream: str,
    dataset: str | None = None,
    policy_options: dict[str, Any] | None = None,
    episode_timeout_s: float | None = None,
) -> dict[str, str]:
    """The task entry of one attempt at ``job``. ``policy_options`` (sampling and token-in
    settings, ``base_url`` among them) are plain JSON scalars."""
    fields = {
        "run_id": run_id,
        "env": env_ref,
        "policy": policy_spec,
        "task_id": job.task_id,
        "seed": str(job.seed),
        "rollout": str(job.rollout),
        "index": str(job.index),
        "attempt": str(attempt),
        "result_stream": result_stream,
    }
    if dataset:
        fields["dataset"] = dataset
    options = dict(policy_options or {})
    base_url = options.pop("base_url", None)
    if base_url:
        fields["base_url"] = base_url
    if options:
        fields["policy_options"] = json.dumps(options, sort_keys=True)
    if episode_timeout_s is not None:
        fields["episode_timeout_s"] = repr(float(episode_timeout_s))
    return fields


async def run_task(fields: dict[str, Any], resources: _Resources | None = None) -> dict[str, str]:
    """Play the attempt a task entry describes; return the result entry's fields (the
    records as JSON, or ``error`` and ``retryable`` after an infrastructure failure)."""
    res = resources or _Resources()
    run_id = fields["run_id"]
    job = Job(int(fields["index"]), fields["task_id"], int(fields["seed"]), int(fields["rollout"]))
    result = {
        "run_id": run_id,
        "task_id": job.task_id,
        "seed": str(job.seed),
        "rollout": str(job.rollout),
        "index": str(job.index),
        "attempt": str(fields.get("attempt", "0")),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }
    timeout = float(fields["episode_timeout_s"]) if fields.get("episode_timeout_s") else None
    try:
        handle = await res.env(fields["env"], fields.get("dataset"))
        options = fields.get("policy_options")
        source = await res.policy(fields["policy"], fields.get("base_url"), options, handle)
    except Exception as err:  # a bad env or policy: every attempt would fail the same way
        return {**result, "error": f"{type(err).__name__}: {err}", "retryable": "0"}
    env = handle.factory()
    try:
        policy = source.factory()
        records = await play_attempt(env, policy, job.keys(run_id, env, policy), timeout)
        return {**result, "records": json.dumps(records)}
    except (InfraError, UserError) as err:  # retried, or a mistake that stops the run
        log.warning("%s: attempt failed: %s", job.label, err)
        message, again = worker_report(err)
        return {**result, "error": message, "retryable": "1" if again else "0"}
    finally:
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
    resources: _Resources | None = None,
    client: Any = None,
) -> int:
    """Process task entries until ``stop_event`` is set or ``max_jobs`` are done; return the
    number processed. Every wait is bounded by ``block_ms``, so a set ``stop_event`` is seen
    within that time. Entries idle longer than ``reclaim_idle_ms`` (a dead worker's) are
    taken over with XAUTOCLAIM, checked every ``reclaim_idle_ms / 2`` and whenever idle.
    ``client`` (shared, left open) or a client of its own: a worker uses at most
    ``CONNECTIONS_PER_WORKER`` connections (its blocking read or episode, its heartbeat)."""
    streams = Streams(prefix)
    group = group or streams.group
    consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    res = resources or _Resources()
    own_resources = resources is None
    r = client if client is not None else connect(url, CONNECTIONS_PER_WORKER)
    done = 0
    cursor = "0-0"
    last_reclaim = 0.0
    reclaim_every = min(max(reclaim_idle_ms / 2000, 0.05), block_ms / 1000 + 1)

    async def process(entry_id: str, fields: dict[str, Any]) -> None:
        nonlocal done
        if fields and not await r.exists(streams.done(fields.get("run_id", ""))):
            beat = asyncio.create_task(
                _heartbeat(r, streams, consumer, entry_id, max(reclaim_idle_ms / 3000, 0.05))
            )
            try:
                result = await run_task(fields, res)
            finally:
                beat.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beat
            await r.xadd(fields["result_stream"], result)
        # result first, then ack: a crash in between repeats the job (deduplicated later)
        await r.xack(streams.tasks, group, entry_id)
        await r.xdel(streams.tasks, entry_id)
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
                    await process(entry_id, fields or {})
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


async def serve_workers(
    url: str,
    concurrency: int = 1,
    *,
    prefix: str = DEFAULT_PREFIX,
    block_ms: int = 1000,
    reclaim_idle_ms: int = 60_000,
    stop_event: asyncio.Event | None = None,
) -> int:
    """``concurrency`` workers in one process (one episode each in flight), sharing env
    handles, policy sources and one client whose pool is sized from ``concurrency``;
    returns when ``stop_event`` is set."""
    stop = stop_event or asyncio.Event()
    res = _Resources()
    base = f"{socket.gethostname()}-{os.getpid()}"
    slots = max(1, concurrency)
    client = connect(url, CONNECTIONS_PER_WORKER * slots)
    try:
        counts = await asyncio.gather(
            *(
                worker(
                    url,
                    consumer=f"{base}-{i}",
                    prefix=prefix,
                    block_ms=block_ms,
                    reclaim_idle_ms=reclaim_idle_ms,
                    stop_event=stop,
                    resources=res,
                    client=client,
                )
                for i in range(slots)
            )
        )
    finally:
        await res.close()
        await client.aclose()
    return sum(counts)


def worker_main(
    url: str,
    concurrency: int = 1,
    *,
    prefix: str = DEFAULT_PREFIX,
    block_ms: int = 1000,
    reclaim_idle_ms: int = 60_000,
) -> int:
    """The ``gymforge worker --redis URL`` entry point: serve until SIGINT/SIGTERM, then
    finish the episodes in flight and exit. Returns the number of tasks processed."""
    import signal

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        return await serve_workers(
            url,
            concurrency,
            prefix=prefix,
            block_ms=block_ms,
            reclaim_idle_ms=reclaim_idle_ms,
            stop_event=stop,
        )

    return asyncio.run(main())
