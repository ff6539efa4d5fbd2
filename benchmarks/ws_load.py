"""A raw multi-process WebSocket load client, the same for every served peer.

``run_load`` spreads N sessions over P worker processes (each an asyncio loop holding
N/P connections), so the client is not what limits a server on a small machine. Each
connection is a ``RawSession`` (``ws_raw.py``): an RFC 6455 client on a bare asyncio
protocol (no compression, answers pings, frames masked once per distinct frame), about a
fifth of the ``websockets`` client's CPU per round trip; ``--client websockets`` uses
that package instead (no keep-alive pings of its own). A session is a script of frames
already encoded as text: the first ``opening`` frames (hello is read first when the peer
sends one) are sent while connecting; once every worker has opened every session the
parent starts the clock and the rest of every script runs concurrently, each frame waiting
for its reply. Replies are checked (``expect``) so that an error reply cannot pass for a
fast step. Per-frame round-trip latencies are returned for the frames marked as steps.

The server's CPU (user + system, to the nanosecond: ``proc_cpu.process_cpu_s``) and peak RSS
are read before and after the timed phase (Linux), so no dependency is needed for them.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import resource
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from proc_cpu import process_cpu_s
from ws_raw import RawSession

OPEN_CONCURRENCY = 64
"""Connections a worker opens at once (a burst of thousands overflows accept backlogs)."""


@dataclass(frozen=True)
class Script:
    """One session: ``frames`` to send in order, the first ``opening`` of them while
    connecting; ``steps[i]`` marks frame i as a step (timed); every reply's ``type`` must
    be in ``expect``."""

    frames: tuple[str, ...]
    steps: tuple[bool, ...]
    opening: int = 1


@dataclass(frozen=True)
class Peer:
    name: str
    url: str
    pid: int
    headers: tuple[tuple[str, str], ...] = ()
    hello: bool = False
    expect: frozenset[str] = frozenset()


@dataclass
class LoadResult:
    peer: str
    sessions: int
    steps: int
    seconds: float
    open_s: float
    cpu_s: float
    peak_rss_mb: float
    latencies: list[float] = field(default_factory=list)
    client_cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.steps / self.seconds

    @property
    def cpu_per_step_us(self) -> float:
        return self.cpu_s / self.steps * 1e6

    @property
    def client_per_step_us(self) -> float:
        """The load client's CPU (every worker process) per step."""
        return self.client_cpu_s / self.steps * 1e6

    def pct(self, q: float) -> float:
        values = sorted(self.latencies)
        return values[min(len(values) - 1, int(q * len(values)))] * 1e3


def proc_peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def raise_nofile(want: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(hard, want)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


async def _connect(peer: Peer, client: str) -> Any:
    if client == "raw":
        return await RawSession.connect(peer.url, peer.headers)
    from websockets.asyncio.client import connect

    return await connect(
        peer.url,
        additional_headers=list(peer.headers),
        compression=None,
        max_size=None,
        ping_interval=None,
        open_timeout=300,
        close_timeout=30,
    )


async def _session_open(peer: Peer, script: Script, gate: asyncio.Semaphore, client: str) -> Any:
    async with gate:
        ws = await _connect(peer, client)
        if peer.hello:
            await ws.recv()
        for frame in script.frames[: script.opening]:
            await ws.send(frame)
            _check(peer, await ws.recv())
    return ws


def _check(peer: Peer, reply: str | bytes) -> None:
    kind = json.loads(reply).get("type")
    if kind not in peer.expect:
        raise RuntimeError(f"{peer.name}: unexpected reply {str(reply)[:300]}")


async def _session_run(peer: Peer, ws: Any, script: Script, lat: list[float]) -> None:
    clock = time.perf_counter
    for frame, is_step in zip(
        script.frames[script.opening :], script.steps[script.opening :], strict=True
    ):
        t0 = clock()
        await ws.send(frame)
        reply = await ws.recv()
        if is_step:
            lat.append(clock() - t0)
        _check(peer, reply)


async def _worker_main(
    peer: Peer, scripts: list[Script], opened: Any, go: Any, out: Any, client: str
) -> None:
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)
    conns = await asyncio.gather(*(_session_open(peer, s, gate, client) for s in scripts))
    await asyncio.get_running_loop().run_in_executor(None, opened.wait)
    await asyncio.get_running_loop().run_in_executor(None, go.wait)
    lat: list[float] = []
    runs = (_session_run(peer, c, s, lat) for c, s in zip(conns, scripts, strict=True))
    await asyncio.gather(*runs)
    out.put(("done", lat))
    await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)


def _run(main: Any) -> None:
    """``asyncio.run``, on uvloop where it is installed (a cheaper client, for every peer)."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


def _worker(peer: Peer, scripts: list[Script], opened: Any, go: Any, out: Any, client: str) -> None:
    raise_nofile(len(scripts) + 256)
    try:
        _run(_worker_main(peer, scripts, opened, go, out, client))
    except BaseException as err:
        out.put(("error", f"{type(err).__name__}: {err}"))
        opened.abort()
        raise


def run_load(peer: Peer, scripts: list[Script], processes: int, client: str = "raw") -> LoadResult:
    """Drive ``scripts`` (one per session) against ``peer`` from ``processes`` workers,
    each connection a ``RawSession`` (``client="raw"``) or a ``websockets`` client."""
    ctx = mp.get_context("fork")  # no re-import of the caller: workers start at once
    processes = max(1, min(processes, len(scripts)))
    opened, go, out = ctx.Barrier(processes + 1), ctx.Event(), ctx.Queue()
    shares = [scripts[i::processes] for i in range(processes)]
    workers = [
        ctx.Process(target=_worker, args=(peer, share, opened, go, out, client), daemon=True)
        for share in shares
    ]
    t_open = time.perf_counter()
    for w in workers:
        w.start()
    try:
        try:
            opened.wait(timeout=900)
        except threading.BrokenBarrierError:
            kind, payload = out.get(timeout=60)
            raise RuntimeError(f"{peer.name}: load worker failed: {payload}") from None
        open_s = time.perf_counter() - t_open
        cpu0 = process_cpu_s(peer.pid)
        client0 = sum(process_cpu_s(w.pid) for w in workers if w.pid is not None)
        t0 = time.perf_counter()
        go.set()
        lat: list[float] = []
        for _ in workers:
            kind, payload = out.get(timeout=900)
            if kind == "error":
                raise RuntimeError(f"{peer.name}: load worker failed: {payload}")
            lat.extend(payload)
        seconds = time.perf_counter() - t0
        cpu_s = process_cpu_s(peer.pid) - cpu0
        client_s = sum(process_cpu_s(w.pid) for w in workers if w.pid is not None) - client0
    finally:
        for w in workers:
            w.join(60)
            if w.is_alive():
                w.kill()
    return LoadResult(
        peer.name,
        len(scripts),
        len(lat),
        seconds,
        open_s,
        cpu_s,
        proc_peak_rss_mb(peer.pid),
        lat,
        client_s,
    )
