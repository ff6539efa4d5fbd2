"""``gymforge worker --redis URL``: ``concurrency`` Redis workers (``redis_worker.worker``)
in one process, sharing env handles, policy sources and one Redis client, until SIGINT or
SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket

from gymforge.rollout.executors.redis_entries import MAX_RECLAIMS
from gymforge.rollout.executors.redis_worker import (
    CONNECTIONS_PER_WORKER,
    DEFAULT_PREFIX,
    WorkerResources,
    connect,
    worker,
)

__all__ = ["serve_workers", "worker_main"]


async def serve_workers(
    url: str,
    concurrency: int = 1,
    *,
    prefix: str = DEFAULT_PREFIX,
    block_ms: int = 1000,
    reclaim_idle_ms: int = 60_000,
    stop_event: asyncio.Event | None = None,
    max_reclaims: int = MAX_RECLAIMS,
) -> int:
    """``concurrency`` workers in one process (one episode each in flight), sharing env
    handles, policy sources and one client whose pool is sized from ``concurrency``;
    returns when ``stop_event`` is set."""
    stop = stop_event or asyncio.Event()
    res = WorkerResources()
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
                    max_reclaims=max_reclaims,
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
    max_reclaims: int = MAX_RECLAIMS,
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
            max_reclaims=max_reclaims,
        )

    return asyncio.run(main())
