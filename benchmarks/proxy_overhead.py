"""Per-request overhead of ``gymforge proxy`` against direct requests to the same server.

Claim: the proxy adds little per request: p50/p99 latency through it, next to the same
requests sent straight to the server in the same run. Through the proxy, turn 1 of each
conversation passes through and later turns continue token-in (a ``/tokenize`` call for the
template delta, then a token-id completion), so both of its paths are in the figures.

Method: the local OpenAI-compatible test server (``gymforge.testing.openai_server``) runs in
its own process with a fixed latency; the proxy runs in this process. Each round plays C
concurrent conversations of T turns (a system prompt, a user message, then one user
message per turn, ~200-character replies) with the real ``openai`` SDK (async), once
direct and once through the proxy, alternating, a warm-up round of each discarded.
Reported: per-request p50 and p99 of each, their differences (the overhead in ms) and
ratios.

Run: python benchmarks/proxy_overhead.py [--rounds 5] [--conversations 16] [--turns 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

import openai
from openai_concurrency import start_server

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer

TOKEN = "benchmark-proxy-token"


async def conversation(c: openai.AsyncOpenAI, turns: int, i: int) -> list[float]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful assistant. " * 8},
        {"role": "user", "content": f"Conversation {i}: start."},
    ]
    out = []
    for t in range(turns):
        t0 = time.perf_counter()
        r = await c.chat.completions.create(model="m", messages=messages, max_tokens=256)  # type: ignore[arg-type]
        out.append(time.perf_counter() - t0)
        messages.append({"role": "assistant", "content": r.choices[0].message.content or ""})
        messages.append({"role": "user", "content": f"Turn {t}: go on."})
    return out


async def one_round(
    base: str, proxy: ProxyServer | None, conversations: int, turns: int, r: int
) -> list[float]:
    clients = []
    for i in range(conversations):
        url = base
        if proxy is not None:
            url = proxy.open_episode(f"bench-{r}-{i}")
        clients.append(openai.AsyncOpenAI(base_url=url, api_key=TOKEN, max_retries=0))
    lists = await asyncio.gather(*(conversation(c, turns, i) for i, c in enumerate(clients)))
    for c in clients:
        await c.close()
    if proxy is not None:
        for i in range(conversations):
            t = proxy.close_episode(f"bench-{r}-{i}")
            assert t.branches == 1 and t.turns[-1].mode == "token-in", "token-in did not engage"
    return [x for xs in lists for x in xs]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--conversations", type=int, default=16)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()
    proc, base = start_server(args.latency)
    try:
        with ProxyServer(ProxyConfig(upstream=base, token=TOKEN)) as proxy:
            direct: list[float] = []
            proxied: list[float] = []
            for r in range(args.rounds + 1):
                d = asyncio.run(one_round(base, None, args.conversations, args.turns, r))
                p = asyncio.run(one_round(base, proxy, args.conversations, args.turns, r))
                if r:  # round 0 warms both up
                    direct += d
                    proxied += p
    finally:
        proc.kill()
    print(
        f"server latency {args.latency * 1000:.0f} ms; {args.conversations} concurrent "
        f"conversations x {args.turns} turns x {args.rounds} rounds; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'':>10} {'p50 ms':>9} {'p99 ms':>9} {'mean ms':>9}")
    for name, xs in (("direct", direct), ("proxy", proxied)):
        print(
            f"{name:>10} {pct(xs, 0.5) * 1000:9.2f} {pct(xs, 0.99) * 1000:9.2f} "
            f"{statistics.fmean(xs) * 1000:9.2f}"
        )
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        a, b = pct(direct, q), pct(proxied, q)
        print(f"overhead {label}: {(b - a) * 1000:+.2f} ms ({b / a:.2f}x direct)")


if __name__ == "__main__":
    main()
