"""``crm``: task generation per family and world reset latency.

Claims: every ``crm`` family generates >= 1,000 tasks/s at every level, and a warm
``env.reset`` (task and template cached, the common case in training, where a task is
played by a group of rollouts) has p50 <= 1 ms.

Method, in one run:

- generation: ``TaskFamily.task(level, seed)`` over fresh seeds (no cache hit) for each
  family and level, against a trivial family that only draws its parameters and two
  numbers (the in-run baseline: the ratio shows what generating a CRM world costs). The
  claim is judged per CPU second of this process (the machine may be shared; CPU time is
  what generation itself costs); the wall-clock rate is printed next to it;
- reset: ``db restore`` (``WorldDB.load``, the ``sqlite3`` deserialize of the cached
  template) against ``naive rebuild`` (CREATE TABLE + INSERT of the same seed rows), the
  whole ``env.reset`` warm, and cold (a task never seen: generate it, build and cache its
  template, restore); p50 and p99 over ``TASKS`` x ``REPEATS`` resets;
- oracle steps per second over whole episodes (tool calls, requester, verifier), the
  fastest of three passes, per wall-clock and per CPU second of this process.

Exits 1 if a claim does not hold. Run: python benchmarks/crm.py [--seconds 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from task_generation import TRIVIAL, rate  # the same generation rate and baseline
from world_reset import TASKS, reset_timings  # the same reset measurement

from gymforge.envs.crm import CrmEnv

PASSES = 3
MIN_TASKS_PER_S = 1_000
MAX_RESET_P50_MS = 1.0


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def generation(seconds: float) -> list[str]:
    base, base_cpu = rate(TRIVIAL, 1, seconds, 50_000)
    print(f"{'family':<24}{'level':>6}{'tasks/s':>10}{'per CPU-s':>11}{'x baseline':>12}")
    print(f"{'(trivial baseline)':<24}{1:>6}{base:>10,.0f}{base_cpu:>11,.0f}{1.0:>12.2f}")
    failed = []
    for family in sorted(CrmEnv.tasks.families.values(), key=lambda f: f.name):
        for level in sorted(family.levels):
            wall, cpu = rate(family, level, seconds, 50_000)
            if cpu < MIN_TASKS_PER_S:
                failed.append(f"{family.name} d{level}: {cpu:,.0f} tasks per CPU-s")
            ratio = cpu / base_cpu
            print(f"{family.name:<24}{level:>6}{wall:>10,.0f}{cpu:>11,.0f}{ratio:>12.2f}")
    return failed


async def oracle_pass(env: CrmEnv, ids: list[str]) -> tuple[int, float, float]:
    steps, wall, cpu = 0, 0.0, 0.0
    for i, task_id in enumerate(ids):
        await env.reset(task_id, i)
        while True:
            action = await env.oracle_action()
            t0, c0 = time.perf_counter(), time.process_time()
            result = await env.step(action)
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
            steps += 1
            if result.done:
                assert result.info["success"], result.info.get("verdict")
                break
    return steps, wall, cpu


async def resets() -> list[str]:
    env = CrmEnv()
    ids = CrmEnv.tasks.sample(TASKS, 1, "train")
    t = await reset_timings(env, ids, CrmEnv.tasks.sample(TASKS, 2, "train"))
    cold, warm, restore, naive = t["cold"], t["warm"], t["restore"], t["naive"]
    seed_rows = statistics.mean(
        sum(len(v) for v in CrmEnv.tasks.resolve(t).truth["world"].values()) for t in ids
    )
    best = min([await oracle_pass(env, ids) for _ in range(PASSES)], key=lambda p: p[1])
    await env.close()
    print(f"\nreset ({TASKS} train tasks, {seed_rows:.0f} seed rows each on average)")
    print(f"  {'':36}{'p50 ms':>9}{'p99 ms':>9}{'n':>7}")
    rows = [
        ("db restore (deserialize template)", restore),
        ("naive rebuild (CREATE + INSERT)", naive),
        ("env reset, warm", warm),
        ("env reset, cold (generate + build)", cold),
    ]
    for name, ms in rows:
        print(f"  {name:36}{statistics.median(ms):9.4f}{pct(ms, 0.99):9.4f}{len(ms):7d}")
    ratio = statistics.median(naive) / statistics.median(warm)
    print(f"  naive rebuild / env reset warm (p50): {ratio:.1f}x")
    n, wall, cpu = best
    print(f"  oracle steps/s: {n / wall:,.0f} wall, {n / max(cpu, 1e-9):,.0f} per CPU-s")
    p50 = statistics.median(warm)
    return (
        [f"warm reset p50 {p50:.3f} ms > {MAX_RESET_P50_MS} ms"] if p50 > MAX_RESET_P50_MS else []
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0.3, help="time per family and level")
    args = ap.parse_args()
    failed = generation(args.seconds) + asyncio.run(resets())
    print("\nclaims: " + ("all hold" if not failed else "FAILED: " + "; ".join(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
