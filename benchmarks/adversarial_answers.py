"""What one hostile answer costs each verifier, and how long it holds the event loop.

Claim: every verifier's cost is linear in the answer's length up to a documented ceiling per
answer (docs/verifiers.md, "Cost of one answer"), and judging one answer never holds the
event loop an episode runs on (a served session shares that loop with every other session).

Method: for each single-turn built-in environment, one task is reset and then answered, in
one step, with adversarial replies of growing size (nested and repeated ``\\boxed{}``, a huge
number, deep brackets, deep and wide JSON, long SQL, many code fences, unclosed reasoning
tags, a plain long line). Per reply: this process's CPU time for the step, the step's wall
time, and the longest gap of a 1 ms heartbeat coroutine on the same loop while the step ran
(the time the loop was held). Growth divides the CPU cost at the largest size by the CPU
cost at a quarter of it (4 means linear, 16 quadratic; shown where the smaller cost is over
1 ms). Work done in other processes (the math pool's workers, the code sandbox) shows in
wall time, not in CPU. One ordinary answer is judged first, so that starting a pool or a
sandbox is not counted against the first attack.

Run: python benchmarks/adversarial_answers.py [--envs math extract sql code puzzles digits]
     [--sizes 4000 16000 64000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

from gymforge.core.types import Reply
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import make_env

FENCE = "```"


def _fit(unit: str, size: int) -> int:
    return max(1, size // max(1, len(unit)))


ATTACKS: dict[str, Callable[[int], str]] = {
    "nested_boxes": lambda n: "\\boxed{" * _fit("\\boxed{}", n) + "1" + "}" * _fit("\\boxed{}", n),
    "repeated_boxes": lambda n: "\\boxed{1} " * _fit("\\boxed{1} ", n),
    "huge_number": lambda n: "\\boxed{" + "9" * n + "}",
    "deep_brackets": lambda n: "\\boxed{" + "(" * (n // 2) + "1" + ")" * (n // 2) + "}",
    "long_sum": lambda n: "\\boxed{" + "1+" * (n // 2) + "1}",
    "deep_json": lambda n: f"{FENCE}json\n" + "[" * (n // 2) + "]" * (n // 2) + f"\n{FENCE}",
    "wide_json": lambda n: f'{FENCE}json\n{{"a": [' + "1," * (n // 2) + f"1]}}\n{FENCE}",
    "long_sql": lambda n: f"{FENCE}sql\nSELECT " + "1+" * (n // 2) + f"1\n{FENCE}",
    # a cross join of the sql tasks' largest table with itself, four times (32^4 rows)
    "slow_sql": lambda n: (
        f"{FENCE}sql\nSELECT count(*) FROM enrollments a, enrollments b, "
        f"enrollments c, enrollments d WHERE a.grade + b.grade > c.grade * d.grade -- "
        f"{'.' * max(0, n - 160)}\n{FENCE}"
    ),
    "many_fences": lambda n: f"{FENCE}python\nx = 1\n{FENCE}\n" * _fit("x" * 20, n),
    "think_tags": lambda n: "<think>" * _fit("<think>", n) + "\\boxed{1}",
    "long_line": lambda n: "a" * n,
}


@dataclass
class Row:
    env: str
    attack: str
    size: int
    cpu_ms: float
    wall_ms: float
    held_ms: float
    reason: str


async def _one(env_id: str, task_id: str, text: str) -> tuple[float, float, float, str]:
    env = make_env(env_id)
    try:
        await env.reset(task_id, 0)
        gaps: list[float] = [0.0]
        stop = asyncio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        beat = asyncio.create_task(heartbeat())
        await asyncio.sleep(0.005)
        gaps.clear()
        c0, w0 = time.process_time(), time.perf_counter()
        result = await env.step(Reply(text=text))
        c1, w1 = time.process_time(), time.perf_counter()
        stop.set()
        await beat
        verdict = result.info.get("verdict") or {}
        reason = str(verdict.get("reason", result.info.get("end_reason", "")))
        return (c1 - c0) * 1e3, (w1 - w0) * 1e3, max(gaps, default=0.0) * 1e3, reason
    finally:
        await env.close()


def _task(env_id: str) -> str:
    source = task_source(make_env(env_id))
    if source is None:
        raise SystemExit(f"{env_id} has no task source")
    return source.sample(1, seed=0)[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    envs = ["math", "extract", "sql", "code", "puzzles", "digits"]
    ap.add_argument("--envs", nargs="+", default=envs)
    ap.add_argument("--sizes", nargs="+", type=int, default=[4_000, 16_000, 64_000])
    ap.add_argument("--attacks", nargs="+", default=sorted(ATTACKS))
    args = ap.parse_args()
    print(
        f"# {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at start; sizes are characters of the reply"
    )
    rows: list[Row] = []
    for env_id in args.envs:
        task_id = _task(env_id)
        asyncio.run(_one(env_id, task_id, "\\boxed{1}"))  # warm-up: pools and sandboxes start
        for attack in args.attacks:
            for size in args.sizes:
                text = ATTACKS[attack](size)
                cpu, wall, held, reason = asyncio.run(_one(env_id, task_id, text))
                rows.append(Row(env_id, attack, len(text), cpu, wall, held, reason))
    head = f"{'cpu ms':>8} {'wall ms':>8} {'held ms':>8}"
    print(f"{'env':8} {'attack':15} {'chars':>7} {head}  verdict")
    for r in rows:
        print(
            f"{r.env:8} {r.attack:15} {r.size:7d} {r.cpu_ms:8.1f} {r.wall_ms:8.1f} "
            f"{r.held_ms:8.1f}  {r.reason}"
        )
    print("\n# worst case per environment (growth: CPU at the largest size / at a quarter of it)")
    big, quarter = max(args.sizes), max(args.sizes) // 4
    for env_id in args.envs:
        mine = [r for r in rows if r.env == env_id]
        worst = max(mine, key=lambda r: max(r.cpu_ms, r.wall_ms))
        growth = []
        for attack in args.attacks:
            at = {r.size: r for r in mine if r.attack == attack}
            hi = [r for s, r in at.items() if s >= big * 0.9]
            lo = [r for s, r in at.items() if abs(s - quarter) <= quarter * 0.1]
            if hi and lo and lo[0].cpu_ms > 1.0:
                growth.append((hi[0].cpu_ms / lo[0].cpu_ms, attack))
        g = max(growth, default=(0.0, "-"))
        print(
            f"{env_id:8} worst {worst.attack} ({worst.size} chars): cpu {worst.cpu_ms:.1f} ms, "
            f"wall {worst.wall_ms:.1f} ms, loop held {max(r.held_ms for r in mine):.1f} ms; "
            f"largest growth x{g[0]:.1f} ({g[1]})"
        )


if __name__ == "__main__":
    main()
