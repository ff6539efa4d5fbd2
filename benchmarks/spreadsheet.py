"""spreadsheet: task generation rate per family and reset latency.

Claims: every spreadsheet family generates >= 1,000 tasks/s at every difficulty level, and
``env.reset`` has p50 <= 5 ms. Task truth is computed in plain Python (no formula engine)
and reset restores the task's template, whose seed formula cells already hold their values.

Method, in one run (rates per wall-clock second and per CPU second of this process: the
machine may be shared, and the CPU rate is what generation itself costs; the verdict reads
the CPU rate):

- generation: ``TaskFamily.task(level, seed)`` over fresh seeds, per family and level, for
  ``--seconds``; the in-run baseline is a trivial family that only draws its parameters
  and two random numbers, so the ratio shows what generation itself costs;
- reset: ``env.reset`` on ``--tasks`` tasks of every family and level, each reset
  ``--repeats`` times on one reused instance (warm: task and template cached, as in
  training, where a task is played many times) and once each on a fresh instance with
  the caches cleared (cold: generate, build the template, restore); p50 and p95 in ms;
- the cost of what reset avoids: one full recalculation of the workbook by the formula
  engine after reset (what a reset that did not restore precomputed values would pay).

Run: python benchmarks/spreadsheet.py [--seconds 0.3] [--tasks 20] [--repeats 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from task_generation import TRIVIAL, rate  # the same generation rate and baseline

from gymforge.envs.spreadsheet import SpreadsheetEnv
from gymforge.envs.spreadsheet.engine import recalc
from gymforge.envs.spreadsheet.families import FAMILIES
from gymforge.envs.spreadsheet.workbook import Book
from gymforge.world import tasks as world_tasks


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def resets(ids: list[str], repeats: int) -> tuple[list[float], list[float], list[float]]:
    warm, cold, full = [], [], []
    for i, tid in enumerate(ids):
        world_tasks._CACHE.clear()
        SpreadsheetEnv.templates._items.clear()
        env = SpreadsheetEnv()
        t0 = time.perf_counter()
        await env.reset(tid, i)
        cold.append((time.perf_counter() - t0) * 1e3)
        for k in range(repeats):
            t0 = time.perf_counter()
            await env.reset(tid, k)
            warm.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        recalc(Book(env.db))
        full.append((time.perf_counter() - t0) * 1e3)
        await env.close()
    return warm, cold, full


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0.3, help="time per family and level")
    ap.add_argument("--tasks", type=int, default=20, help="tasks per family and level")
    ap.add_argument("--repeats", type=int, default=10, help="warm resets per task")
    args = ap.parse_args()
    base, base_cpu = rate(TRIVIAL, 1, args.seconds)
    print(f"{'family':<26}{'level':>6}{'tasks/s':>10}{'CPU-s':>10}{'x base':>8}  verdict")
    print(f"{'(trivial baseline)':<26}{1:>6}{base:>10,.0f}{base_cpu:>10,.0f}{1.0:>8.2f}")
    slow = []
    for family in FAMILIES:
        for level in sorted(family.levels):
            wall, cpu = rate(family, level, args.seconds)
            ok = cpu >= 1000
            slow += [] if ok else [f"{family.name} d{level}"]
            print(
                f"{family.name:<26}{level:>6}{wall:>10,.0f}{cpu:>10,.0f}{cpu / base_cpu:>8.3f}  "
                f"{'ok' if ok else 'BELOW 1,000'}"
            )
    ids = [f.task_id(level, s) for f in FAMILIES for level in f.levels for s in range(args.tasks)]
    warm, cold, full = asyncio.run(resets(ids, args.repeats))
    print(f"\nreset over {len(ids)} tasks ({args.repeats} warm resets each):")
    for name, ms in (("warm reset", warm), ("cold reset", cold), ("engine recalc", full)):
        print(f"  {name:<14} p50 {statistics.median(ms):7.3f} ms   p95 {pct(ms, 0.95):7.3f} ms")
    p50 = statistics.median(warm)
    verdict = "SLOW: " + ", ".join(slow) if slow else "all families >= 1,000 tasks per CPU-s"
    print(f"\ngeneration: {verdict}")
    print(f"reset p50 {p50:.3f} ms: {'ok (<= 5 ms)' if p50 <= 5.0 else 'OVER 5 ms'}")


if __name__ == "__main__":
    main()
