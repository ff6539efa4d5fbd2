"""Concurrency through the real openai SDK over HTTP, against a local server with 1 s latency.

Claim: ``OpenAIPolicy`` keeps p99 call latency <= 1.5 s at 512 concurrent conversations or
more on this 2-core machine (the server answers every call after exactly 1 s).

Method: the local OpenAI-compatible server (``gymforge.testing.openai_server``) runs in its
own process with 1 s injected latency, so the client's CPU time is measured alone. C
conversations run at once, each a closed loop of ``OpenAIPolicy.act`` calls: a ledger-like
reset (system prompt, task, three tool schemas), then tool results, restarting every
``--turns`` turns. Each response carries vLLM's fields: the prompt's token ids (about
2,000) and ~200 completion tokens with logprobs. One warm-up round is discarded, then every
call is timed for ``--seconds``. Conversations start staggered over the first second (a
closed loop started in one burst stays in lock-step: every response would then arrive in
the same instant and wait for the CPU behind the others). Reported per (transport, request
path, C): p50/p99/max latency, calls/s, client and server CPU per call, the client's busy
share of one core and its run-queue wait per second (``runq``: time it was ready but other
processes held the cores; near 0 on an idle machine), errors. A client that is neither busy
nor starved is waiting on the network; one whose ``busy`` nears 1.0 is at its CPU limit.

Transports: the SDK's default httpx client and its aiohttp transport. Request paths:
``fast`` (``client.post`` + jiter) and ``typed`` (``client.chat.completions.create``).
Run: python benchmarks/openai_concurrency.py [--levels 128,256,512,1024] [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from proc_cpu import process_cpu_s

from gymforge.core.policy import EpisodeContext
from gymforge.core.types import Message, Observation
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry, Sampling

TARGET_P99 = 1.5
TOOLS = tuple(
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "Find customers whose name contains the given text.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "Part of a name"}},
                "required": ["name"],
            },
        },
    }
    for name in ("search_customers", "list_accounts", "transfer")
)
RESET = Observation(
    messages=(
        Message(role="system", content="You are a bank clerk. Use the tools. " * 8),
        Message(role="user", content="Make these transfers, each exactly once: ... " * 20),
    ),
    tools=TOOLS,
)
TOOL_RESULT = Observation(
    messages=(
        Message(
            role="tool",
            content='{"ok":true,"result":[{"customer_id":"C101","name":"Ana Smith"}]}',
            tool_call_id="call_1",
        ),
    )
)


@dataclass
class Result:
    transport: str
    path: str
    concurrency: int
    latencies: list[float]
    cpu_per_call_ms: float
    calls_per_s: float
    errors: int
    server_cpu_per_call_ms: float
    cpu_share: float  # client CPU seconds per wall second (1.0 = one core, the GIL's limit)
    starved: float  # client seconds spent waiting for a CPU per wall second

    def pct(self, q: float) -> float:
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def runqueue_wait_seconds() -> float:
    """Time this process's threads spent runnable but waiting for a CPU (Linux schedstat):
    near zero on an idle machine, large when other work crowds the cores."""
    total = 0
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/schedstat") as f:
            total += int(f.read().split()[1])
    return total / 1e9


async def measure(
    base_url: str,
    server_pid: int,
    transport: str,
    path: str,
    concurrency: int,
    seconds: float,
    turns: int,
) -> Result:
    factory = OpenAIPolicyFactory(
        "bench",
        base_url=base_url,
        transport=transport,  # type: ignore[arg-type]
        request_path=path,  # type: ignore[arg-type]
        sampling=Sampling(temperature=1.0),
        retry=Retry(max_attempts=1, call_timeout=60.0),
    )
    ctx = EpisodeContext("bench/v1/d1/s0", 0)
    latencies: list[float] = []
    errors = 0
    phase = {"measuring": False, "stop": False}

    async def conversation(i: int) -> None:
        nonlocal errors
        await asyncio.sleep(ramp * i / concurrency)  # staggered starts, as a runner's are
        policy = factory()
        turn = turns
        while not phase["stop"]:
            if turn >= turns:
                await policy.start(ctx)
                turn = 0
            t0 = time.perf_counter()
            try:
                await policy.act(RESET if turn == 0 else TOOL_RESULT)
            except Exception:
                errors += phase["measuring"]
                turn = turns
                continue
            if phase["measuring"]:
                latencies.append(time.perf_counter() - t0)
            turn += 1

    ramp = 1.0
    tasks = [asyncio.create_task(conversation(i)) for i in range(concurrency)]
    await asyncio.sleep(ramp + 2.5)  # warm-up: ramp, connections opened, a round discarded
    phase["measuring"] = True
    cpu0, wall0, srv0 = time.process_time(), time.perf_counter(), process_cpu_s(server_pid)
    wait0 = runqueue_wait_seconds()
    await asyncio.sleep(seconds)
    phase["measuring"] = False
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    srv, wait = process_cpu_s(server_pid) - srv0, runqueue_wait_seconds() - wait0
    phase["stop"] = True
    await asyncio.wait(tasks, timeout=30)
    await factory.aclose()
    n = max(1, len(latencies))
    return Result(
        transport,
        path,
        concurrency,
        latencies,
        cpu / n * 1e3,
        n / wall,
        errors,
        srv / n * 1e3,
        cpu / wall,
        wait / wall,
    )


def start_server(latency: float, cache_limit: int = 4096) -> tuple[subprocess.Popen[str], str]:
    code = "from gymforge.testing.openai_server import main; main()"
    cmd = [sys.executable, "-c", code, "--latency", str(latency), "--reply-chars", "200"]
    proc = subprocess.Popen(
        [*cmd, "--cache-limit", str(cache_limit)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="128,256,384,512,640,768,1024")
    ap.add_argument("--transports", default="httpx,aiohttp")
    ap.add_argument("--paths", default="fast,typed")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--turns", type=int, default=4, help="turns per conversation")
    ap.add_argument("--latency", type=float, default=1.0)
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    proc, base_url = start_server(args.latency)
    results: list[Result] = []
    print(
        f"server latency {args.latency} s; {args.seconds} s measured per row; target p99 <= "
        f"{TARGET_P99} s; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'transport':9} {'path':5} {'C':>5} {'p50 s':>6} {'p99 s':>6} {'max s':>6} "
          f"{'calls/s':>8} {'cpu/call':>9} {'server':>8} {'busy':>5} {'runq':>5} "
          f"{'errors':>6}")  # fmt: skip
    try:
        for path in args.paths.split(","):
            for transport in args.transports.split(","):
                for c in levels:
                    r = asyncio.run(
                        measure(base_url, proc.pid, transport, path, c, args.seconds, args.turns)
                    )
                    results.append(r)
                    print(
                        f"{transport:9} {path:5} {c:5d} {r.pct(0.5):6.2f} {r.pct(0.99):6.2f} "
                        f"{max(r.latencies, default=float('nan')):6.2f} {r.calls_per_s:8.0f} "
                        f"{r.cpu_per_call_ms:7.2f}ms {r.server_cpu_per_call_ms:6.2f}ms "
                        f"{r.cpu_share:5.2f} {r.starved:5.2f} {r.errors:6d}",
                        flush=True,
                    )
                    if r.pct(0.99) > 3 * TARGET_P99:
                        break  # far past the knee: higher levels only take longer
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for path in args.paths.split(","):
        for transport in args.transports.split(","):
            ok = [
                r.concurrency
                for r in results
                if (r.transport, r.path) == (transport, path)
                and r.pct(0.99) <= TARGET_P99
                and r.errors == 0
            ]
            best = max(ok) if ok else "none"
            print(f"largest concurrency with p99 <= {TARGET_P99} s: {transport}/{path}: {best}")


if __name__ == "__main__":
    main()
