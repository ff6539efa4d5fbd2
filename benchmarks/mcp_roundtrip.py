"""MCP tool-call round trip against the WebSocket server's step round trip, same run.

Claim: stepping a served environment over MCP (``gymforge serve ENV --mcp``) costs a small,
stated multiple of stepping it over gymforge's own WebSocket protocol.

Method: two ``gymforge serve ledger`` processes, one WebSocket (``--token``), one MCP over
streamable HTTP (``--mcp --token``), plus an MCP server over stdio spawned by the SDK's
client. One client session each, stepped one call at a time (the round trip without
queueing), playing the same difficulty-1 ledger episodes with the task's reference plan
computed client-side beforehand (so the policy costs nothing). Every step is timed on the
client: ``env.step`` for WebSocket, ``client.call_tool`` (the environment's tools and
``gymforge_submit``) for MCP; resets are not timed. The modes take turns round by round so
that load drift on a shared machine hits them alike. Printed: steps, p50/p99/mean per mode
and each MCP mode's ratios to WebSocket.

Run: python benchmarks/mcp_roundtrip.py [--episodes 120] [--rounds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from serve_load import TOKEN, start_serve  # the same server start

from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.client import RemoteEnvFactory

AUTH = {"Authorization": f"Bearer {TOKEN}"}
Plan = tuple[str, list[Action]]
Stepper = Callable[[Plan, int, list[float]], Awaitable[None]]


def plans(n: int, seed: int) -> list[Plan]:
    """``n`` difficulty-1 tasks (no injected faults) with their reference plans."""
    env = LedgerEnv()
    ids = LedgerEnv.tasks.sample(n, seed, "train", [1])
    return [(t, list(env.oracle_plan(LedgerEnv.tasks.resolve(t)))) for t in ids]


@asynccontextmanager
async def ws_stepper(base: str) -> AsyncIterator[Stepper]:
    env = RemoteEnvFactory(base.replace("http://", "ws://"), TOKEN)()

    async def play(plan: Plan, seed: int, lat: list[float]) -> None:
        await env.reset(plan[0], seed)
        for action in plan[1]:
            t0 = time.perf_counter()
            result = await env.step(action)
            lat.append(time.perf_counter() - t0)
            assert not (result.truncated or (result.terminated and not result.info["success"]))

    try:
        yield play
    finally:
        await env.close()


@asynccontextmanager
async def mcp_stepper(client: Client) -> AsyncIterator[Stepper]:
    async def play(plan: Plan, seed: int, lat: list[float]) -> None:
        await client.call_tool("gymforge_reset", {"task_id": plan[0], "seed": seed})
        for action in plan[1]:
            if isinstance(action, Reply):
                name, args = "gymforge_submit", {"reply": action.text}
            else:
                assert isinstance(action, ToolCall)
                name, args = action.name, dict(action.arguments)
            t0 = time.perf_counter()
            result = await client.call_tool(name, args)
            lat.append(time.perf_counter() - t0)
            assert not result.is_error and result.structured_content is not None
        assert result.structured_content["info"]["success"]

    yield play


@asynccontextmanager
async def mcp_http(base: str, mode: str) -> AsyncIterator[Stepper]:
    url = httpx.post(base + "/sessions", headers=AUTH).json()["url"]
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client(headers=AUTH))
        transport = streamable_http_client(url, http_client=http)
        client = await stack.enter_async_context(Client(transport, mode=mode))
        yield await stack.enter_async_context(mcp_stepper(client))


@asynccontextmanager
async def mcp_stdio() -> AsyncIterator[Stepper]:
    cmd = ["-m", "gymforge.cli", "serve", "ledger", "--mcp", "--transport", "stdio"]
    params = StdioServerParameters(command=sys.executable, args=cmd, env=dict(os.environ))
    async with Client(params) as client, mcp_stepper(client) as play:
        yield play


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3


async def measure(ws_base: str, mcp_base: str, work: list[Plan], rounds: int) -> dict[str, Any]:
    modes: dict[str, Callable[[], Any]] = {
        "websocket step": lambda: ws_stepper(ws_base),
        "mcp http (2026-07-28)": lambda: mcp_http(mcp_base, "auto"),
        "mcp http (handshake era)": lambda: mcp_http(mcp_base, "legacy"),
        "mcp stdio": mcp_stdio,
    }
    lat: dict[str, list[float]] = {m: [] for m in modes}
    async with AsyncExitStack() as stack:
        steppers = {m: await stack.enter_async_context(make()) for m, make in modes.items()}
        for plan in work[:5]:  # warm-up: connections, caches, the servers' first episodes
            for play in steppers.values():
                await play(plan, 0, [])
        per = -(-len(work) // rounds)
        for r in range(rounds):
            for m, play in steppers.items():
                for i, plan in enumerate(work[r * per : (r + 1) * per]):
                    await play(plan, i, lat[m])
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=120)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    ws_proc, ws_base = start_serve()
    mcp_proc, mcp_base = start_serve("--mcp")
    print(f"cpus: {os.cpu_count()}; load: {os.getloadavg()}")
    try:
        lat = asyncio.run(measure(ws_base, mcp_base, plans(args.episodes, 7), args.rounds))
    finally:
        for proc in (ws_proc, mcp_proc):
            proc.terminate()
            proc.wait(10)
    base = lat["websocket step"]
    head = f"{'mode':<26} {'steps':>6} {'p50 ms':>7} {'p99 ms':>7} {'mean ms':>8}"
    print(f"\n{head} {'x p50':>6} {'x p99':>6}")
    for mode, values in lat.items():
        print(
            f"{mode:<26} {len(values):>6} {pct(values, 0.5):>7.3f} {pct(values, 0.99):>7.3f} "
            f"{statistics.fmean(values) * 1e3:>8.3f} {pct(values, 0.5) / pct(base, 0.5):>6.2f} "
            f"{pct(values, 0.99) / pct(base, 0.99):>6.2f}"
        )


if __name__ == "__main__":
    main()
