"""throughput: reset latency and step throughput under parallelism, against the budget.

``QAProfile.throughput.concurrency`` instances run random-policy episodes concurrently on
one event loop for a fixed number of episodes; the best of up to three runs is judged.
Reported: reset p50/p95 (ms) and aggregate steps per second, compared with the declared
``reset_p50_ms`` and ``steps_per_s`` after scaling by the machine's measured slowdown
(``machine_speed``: a fixed reference workload timed right before and after each run), so a
loaded machine does not fail an environment that is fast on an idle one.

The slowdown excuses only the part of a reset's wall time the process was busy (computing,
or queued for a CPU; ``busy_clock``). The rest is idle wait (a sleep, I/O, a socket) that no
machine load explains, and it counts in full: a reset is judged ``busy / slowdown + idle``.
A reset whose p50 is over budget with most of it idle fails saying it is dominated by waiting,
however loaded the machine is.

What it cannot catch: slowness that only shows with more concurrency than the profile
declares, with a real policy's latency, or on a machine unlike this one (the slowdown
scale assumes the environment is CPU-bound like the reference workload).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

from gymforge.core.policy import episode_context
from gymforge.qa.checks.busy_clock import busy_seconds
from gymforge.qa.checks.common import CheckFailed, QAOptions, jobs, run_async
from gymforge.qa.checks.machine_speed import Slowdown, measure_workload
from gymforge.qa.target import QATarget
from gymforge.rollout.scripted import RandomPolicy

NAME = "throughput"


@dataclass(frozen=True)
class ResetTime:
    """One reset: its wall time and the part of it the process spent idle (ms)."""

    wall_ms: float
    idle_ms: float

    def judged_ms(self, slowdown: float) -> float:
        """The reset's time with the machine's slowdown excusing only the busy part."""
        return (self.wall_ms - self.idle_ms) / slowdown + self.idle_ms


async def _measure(
    target: QATarget, pairs: list[tuple[str, int]], concurrency: int
) -> tuple[list[ResetTime], int, float]:
    queue = list(pairs)
    resets: list[ResetTime] = []
    steps = 0

    async def worker() -> None:
        nonlocal steps
        env = target.factory()
        try:
            while queue:
                task_id, seed = queue.pop()
                policy = RandomPolicy()
                await policy.start(episode_context(policy, env, task_id, seed))
                busy0, t0 = busy_seconds(), time.perf_counter()
                obs = await env.reset(task_id, seed)
                wall = time.perf_counter() - t0
                busy = min(wall, max(0.0, busy_seconds() - busy0))
                resets.append(ResetTime(wall * 1e3, (wall - busy) * 1e3))
                while True:
                    result = await env.step((await policy.act(obs)).action)
                    steps += 1
                    obs = result.observation
                    if result.terminated or result.truncated:
                        break
                    await asyncio.sleep(0)  # let the other episodes interleave
        finally:
            await env.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return resets, steps, time.perf_counter() - t0


ATTEMPTS = 3


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    """Up to ``ATTEMPTS`` measurements; the best one is judged. A loaded machine can only
    make an environment look slower, so the best of a few runs, each scaled by the slowdown
    measured around it, is the fairest figure."""
    budget = target.profile.throughput
    pairs = jobs(target, max(32, opts.episodes * 4), opts.seed + 8, "all")
    best: tuple[float, float, float, int, float, float] | None = None
    attempts = 0
    while attempts < ATTEMPTS:
        attempts += 1
        before = measure_workload()
        resets, steps, seconds = run_async(_measure(target, pairs, budget.concurrency))
        slowdown = Slowdown(before, measure_workload()).factor
        judged = sorted(r.judged_ms(slowdown) for r in resets)
        p50 = statistics.median(judged)
        p95 = judged[min(len(judged) - 1, int(0.95 * len(judged)))]
        idle = statistics.median(r.idle_ms for r in resets)
        rate = steps / seconds * slowdown
        if best is None or (p50, -rate) < (best[0], -best[2]):
            best = (p50, p95, rate, steps, slowdown, idle)
        if p50 <= budget.reset_p50_ms and rate >= budget.steps_per_s:
            break
    assert best is not None
    p50, p95, rate, steps, slowdown, idle = best
    metrics = {
        "reset_p50_ms": round(p50, 3),
        "reset_p95_ms": round(p95, 3),
        "reset_idle_p50_ms": round(idle, 3),
        "steps_per_s": round(rate, 1),
        "machine_slowdown": round(slowdown, 2),
        "concurrency": budget.concurrency,
        "episodes": len(pairs),
        "steps": steps,
        "attempts": attempts,
    }
    scaled = "" if slowdown == 1.0 else f"; scaled by the machine's {slowdown:.2f}x slowdown"
    summary = (
        f"reset p50 {p50:.2f} ms (budget {budget.reset_p50_ms} ms; {idle:.2f} ms idle), "
        f"p95 {p95:.2f} ms; "
        f"{rate:,.0f} steps/s at concurrency {budget.concurrency} "
        f"(budget {budget.steps_per_s:,.0f}); best of {attempts}{scaled}"
    )
    if p50 > budget.reset_p50_ms and idle > p50 / 2:
        raise CheckFailed(
            f"reset dominated by waiting: {idle:.2f} ms of its p50 {p50:.2f} ms was idle (a "
            "sleep, I/O or another process), which no machine load excuses; " + summary,
            metrics,
        )
    if p50 > budget.reset_p50_ms or rate < budget.steps_per_s:
        raise CheckFailed("over budget: " + summary, metrics)
    return summary, metrics
