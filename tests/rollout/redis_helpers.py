"""A throwaway ``redis-server`` on 127.0.0.1 for the Redis backend tests: an ephemeral port,
no persistence, bounded start-up loops, killed on exit."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REDIS_SERVER = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """Start a redis-server (five tries at a free port, ten seconds each to answer PING);
    yield its URL; kill it."""
    import redis

    assert REDIS_SERVER is not None, "redis-server is not installed"
    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            [
                REDIS_SERVER,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        client.close()
        if proc.poll() is None:
            break
    else:
        raise RuntimeError("redis-server did not start")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait(timeout=10)


async def unacked(url: str) -> int:
    """How many tasks of the run's stream the workers' group has taken and not yet acked."""
    from gymforge.rollout.executors.redis_worker import Streams, connect

    r = connect(url)
    try:
        streams = Streams()
        info = await r.xpending(streams.tasks, streams.group)
        return int(info["pending"])
    finally:
        await r.aclose()
