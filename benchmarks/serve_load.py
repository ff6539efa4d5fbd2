"""Load test of ``gymforge serve``: many concurrent WebSocket sessions on one server.

Claim: a served ledger sustains hundreds to a thousand concurrent sessions with bounded
step latency, and we say what the service costs against in-process stepping.

Method: ``gymforge serve ledger`` runs in its own process (as deployed: one server, one
client process; on this 2-core machine each gets about one core). The client opens N
sessions at once (``RemoteEnvironment``, token auth on) and each runs E short episodes of
difficulty-1 ledger tasks with a scripted policy: the task's reference plan computed
client-side beforehand, so the policy costs nothing and needs no extra round trips. Every
step's round trip is timed on the client. The same episodes are then stepped in-process
on N ``LedgerEnv`` instances driven concurrently on one event loop, for the ratio.
Reported per N: sessions, episodes, steps, steps/s, p50/p99 step latency, success, session
open time, and the server's own handling-time percentiles from ``/metrics``.

Run: python benchmarks/serve_load.py [--sessions 8 256 1024] [--episodes 2]
(8 sessions is the reference row: round-trip latency without queueing.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from gymforge.core.types import Action
from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.client import RemoteEnvFactory

TOKEN = "bench-token-0123456789"


@dataclass
class Result:
    mode: str
    sessions: int
    episodes: int
    steps: int
    seconds: float
    latencies: list[float]
    successes: int
    open_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.steps / self.seconds

    def pct(self, q: float) -> float:
        values = sorted(self.latencies)
        return values[min(len(values) - 1, int(q * len(values)))] * 1e3


def plans(n: int, seed: int) -> list[tuple[str, list[Action]]]:
    """``n`` difficulty-1 tasks (no injected faults) with their reference plans."""
    env = LedgerEnv()
    ids = LedgerEnv.tasks.sample(n, seed, "train", [1])
    return [(t, list(env.oracle_plan(LedgerEnv.tasks.resolve(t)))) for t in ids]


async def drive(env: Any, work: list[tuple[str, list[Action]]], lat: list[float]) -> int:
    wins = 0
    for i, (task_id, plan) in enumerate(work):
        await env.reset(task_id, i)
        for action in plan:
            t0 = time.perf_counter()
            result = await env.step(action)
            lat.append(time.perf_counter() - t0)
            if result.terminated or result.truncated:
                wins += bool(result.info.get("success"))
                break
    return wins


def split(work: list[tuple[str, list[Action]]], n: int) -> list[list[tuple[str, list[Action]]]]:
    return [work[i::n] for i in range(n)]


async def remote(url: str, sessions: int, work: list[tuple[str, list[Action]]]) -> Result:
    factory = RemoteEnvFactory(url, TOKEN)
    envs = [factory() for _ in range(sessions)]
    t0 = time.perf_counter()
    opened = await asyncio.gather(*(e.reset(work[0][0], 0) for e in envs), return_exceptions=True)
    open_s = time.perf_counter() - t0
    failed = [o for o in opened if isinstance(o, BaseException)]
    if failed:
        raise RuntimeError(f"{len(failed)} sessions failed to open: {failed[0]!r}")
    lat: list[float] = []
    t0 = time.perf_counter()
    wins = await asyncio.gather(
        *(drive(e, w, lat) for e, w in zip(envs, split(work, sessions), strict=True))
    )
    seconds = time.perf_counter() - t0
    await asyncio.gather(*(e.close() for e in envs))
    return Result("remote (ws)", sessions, len(work), len(lat), seconds, lat, sum(wins), open_s)


async def local(sessions: int, work: list[tuple[str, list[Action]]]) -> Result:
    envs = [LedgerEnv() for _ in range(sessions)]
    lat: list[float] = []

    async def run(env: LedgerEnv, mine: list[tuple[str, list[Action]]]) -> int:
        wins = await drive(env, mine, lat)
        await env.close()
        return wins

    t0 = time.perf_counter()
    wins = await asyncio.gather(
        *(run(e, w) for e, w in zip(envs, split(work, sessions), strict=True))
    )
    seconds = time.perf_counter() - t0
    return Result("in-process", sessions, len(work), len(lat), seconds, lat, sum(wins))


def start_serve(*extra: str) -> tuple[subprocess.Popen[str], str]:
    """A ``gymforge serve ledger`` process on a free port with ``extra`` flags, once it
    answers ``/health``; its HTTP base URL, read from its banner."""
    cmd = [sys.executable, "-m", "gymforge.cli", "serve", "ledger", "--port", "0"]
    cmd += ["--token", TOKEN, *extra]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"(?:ws|http)://127\.0\.0\.1:(\d+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"server did not start: {line}")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
    base = f"http://127.0.0.1:{match.group(1)}"
    for _ in range(300):
        try:
            httpx.get(base + "/health", timeout=1)
            return proc, base
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server did not answer /health")


def start_server(max_sessions: int) -> tuple[subprocess.Popen[str], str]:
    """The WebSocket server with room for ``max_sessions`` sessions of this one client."""
    proc, base = start_serve(
        "--max-sessions", str(max_sessions), "--max-sessions-per-client", str(max_sessions)
    )
    return proc, base.replace("http://", "ws://")


def server_latency(url: str) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    data = httpx.get(url.replace("ws://", "http://") + "/metrics", headers=auth).json()
    return data["latency"].get("step", {})  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[8, 256, 1024])
    ap.add_argument("--episodes", type=int, default=2, help="Episodes per session (min).")
    args = ap.parse_args()
    proc, url = start_server(max(args.sessions) + 16)
    print(f"server: {url} (pid {proc.pid}); cpus: {os.cpu_count()}; load: {os.getloadavg()}")
    head = (
        f"{'mode':<12} {'sessions':>8} {'episodes':>8} {'steps':>7} {'sec':>6} "
        f"{'steps/s':>8} {'p50 ms':>7} {'p99 ms':>8} {'success':>7} {'open s':>6}"
    )
    try:
        for n in args.sessions:
            per = max(args.episodes, -(-512 // n))  # at least 512 episodes per row
            work = plans(n * per, seed=n)
            r = asyncio.run(remote(url, n, work))
            l_ = asyncio.run(local(n, work))
            srv = server_latency(url)
            print(f"\n{head}")
            for x in (l_, r):
                print(
                    f"{x.mode:<12} {x.sessions:>8} {x.episodes:>8} {x.steps:>7} "
                    f"{x.seconds:>6.2f} {x.rate:>8.0f} {x.pct(0.5):>7.3f} {x.pct(0.99):>8.3f} "
                    f"{x.successes / x.episodes:>7.0%} {x.open_s:>6.2f}"
                )
            print(
                f"ratio remote/in-process: steps/s x{r.rate / l_.rate:.3f}; "
                f"remote mean step {statistics.fmean(r.latencies) * 1e3:.2f} ms; server-side "
                f"step handling p50 {srv.get('p50_ms')} ms, p99 {srv.get('p99_ms')} ms"
            )
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
