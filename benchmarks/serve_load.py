"""Load test of ``gymforge serve``: many concurrent WebSocket sessions on one server.

Claim (issue 35): a served gymforge environment does >= 3x the steps/s of OpenEnv 0.10's
server at <= 0.3x its CPU per step, with p99 step latency at or below it, at N = 256,
1,024 and 4,096 concurrent sessions.

Default mode, ``--peers``: the same raw multi-process WebSocket client
(``benchmarks/ws_load.py``) drives, per N and in interleaved repetitions, each peer freshly
started in its own process: OpenEnv's ``openenv init`` template echo environment under its
own ``create_app`` + uvicorn (from ``.venv-interop``; skipped, saying so, when that venv or
OpenEnv is absent), ``gymforge serve benchmarks/echo_env.py:EchoEnv`` doing the same work
(like for like; on uvloop when installed, and with uvloop made unimportable: the ``-asyncio``
row), and ``gymforge serve ledger`` (the realistic row: difficulty-1 tasks from a pool of
100, reference plans computed client-side, a reset whenever an episode ends).
Each session resets and then sends ``--steps`` steps (issue 35's measurement: 10); the
timed phase starts once every session is open. ``--min-steps M`` gives a small N more steps
per session, so that a row holds at least M steps (a longer window than 256 x 10, a fifth
of a second for gymforge). It is not the same workload: OpenEnv's CPU per step falls as its
sessions run longer (at 256 sessions on 2026-12-04: 137 to 188 us at 10 steps, 152 at 40,
132 at 160; gymforge's stayed at 53 to 63 us). gymforge runs with bearer-token auth on, as
deployed. Reported per peer: steps/s, server CPU per step (``/proc/PID/stat``), server CPU
utilisation, p50/p99 step round trip, peak RSS, open time, the load client's CPU per step;
then each peer / OpenEnv ratios, best of the reps.

``--in-process``: the earlier comparison of a served ledger (``RemoteEnvironment``
clients) against the same episodes stepped in-process.

Run: python benchmarks/serve_load.py [--sessions 256 1024 4096] [--steps 10] [--min-steps 0]
[--reps 2]
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


NO_UVLOOP = "import sys; sys.modules['uvloop'] = None; from gymforge.cli import main; main()"
"""``gymforge`` with uvloop made unimportable: uvicorn's loop=auto falls back to asyncio."""


def start_serve(
    *extra: str, env: str = "ledger", asyncio_loop: bool = False
) -> tuple[subprocess.Popen[str], str]:
    """A ``gymforge serve ENV`` process on a free port with ``extra`` flags, once it
    answers ``/health``; its HTTP base URL, read from its banner. ``asyncio_loop``: on
    plain asyncio even where uvloop is installed."""
    launcher = ["-c", NO_UVLOOP] if asyncio_loop else ["-m", "gymforge.cli"]
    cmd = [sys.executable, *launcher, "serve", env, "--port", "0"]
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
    ap.add_argument("--sessions", type=int, nargs="+", default=None)
    ap.add_argument("--episodes", type=int, default=2, help="--in-process: episodes per session")
    ap.add_argument("--steps", type=int, default=10, help="--peers: steps per session")
    ap.add_argument(
        "--min-steps",
        type=int,
        default=0,
        help="--peers: steps per row at least (more steps per session at a small N)",
    )
    ap.add_argument("--reps", type=int, default=2, help="--peers: interleaved repetitions")
    ap.add_argument("--processes", type=int, default=3, help="--peers: load client processes")
    ap.add_argument("--only", nargs="+", default=None, help="--peers: peer names to run")
    ap.add_argument(
        "--client",
        choices=("raw", "websockets"),
        default="raw",
        help="--peers: the load client's connections (ws_raw.py, or the websockets package)",
    )
    ap.add_argument("--in-process", action="store_true", help="the served vs in-process mode")
    args = ap.parse_args()
    if not args.in_process:
        from serve_peers import compare

        compare(
            args.sessions or [256, 1024, 4096],
            args.steps,
            args.reps,
            args.processes,
            args.only,
            args.client,
            args.min_steps,
        )
        return
    args.sessions = args.sessions or [8, 256, 1024]
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
