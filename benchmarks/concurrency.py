"""Concurrent episodes with a slow policy: does the one runner keep 8,192 episodes in flight?

Claim: on 2 cores, 8,192 concurrent ledger episodes with an in-process policy of 1 s latency
(``asyncio.sleep``), run by ``gymforge.rollout.run`` on its ``LocalExecutor``, all succeed,
with p99 step latency at most 1.5 s. Step latency is measured from the moment
the policy is asked to act until the environment's step result is back, so it includes the
policy's 1 s, the environment step and the runner's queueing; the baseline is the same
policy at concurrency 1, measured in the same run.

Run: python benchmarks/concurrency.py [--episodes 8192] [--latency 1.0] [--out DIR]
(``--out`` also writes every episode to ``DIR/trajectories.jsonl``, durably, through the
runner's group commit: one fsync per batch of episodes that finished together.)
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import time
from pathlib import Path

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import EpisodeContext, LocalExecutor, OraclePolicy, PolicyTurn, RunSpec, run

LATENCY = 1.0
STEP_TIMES: list[float] = []


class SlowOracle(OraclePolicy):
    """The oracle behind a model server that takes ``LATENCY`` seconds per turn."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.asked: float | None = None

    async def act(self, observation: Observation) -> PolicyTurn:
        now = time.perf_counter()
        if self.asked is not None:
            STEP_TIMES.append(now - self.asked)  # previous act -> this act: one whole step
        self.asked = now
        await asyncio.sleep(LATENCY)
        return await super().act(observation)


async def measure(n: int, out: Path | None) -> tuple[float, float, float, float]:
    STEP_TIMES.clear()
    pairs = [(t, 1) for t in LedgerEnv.tasks.sample(n, 7, difficulties=[1])]
    spec = RunSpec(env="ledger", policy="slow-oracle", jobs=pairs, concurrency=n, out=out)
    t0 = time.perf_counter()
    result = await run(spec, LocalExecutor(LedgerEnv, SlowOracle))
    wall = time.perf_counter() - t0
    times = sorted(STEP_TIMES)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    return result.summary["success_rate"], statistics.median(times), p99, wall


def main() -> None:
    global LATENCY
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=8192)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=None, help="Write the trajectories here.")
    args = ap.parse_args()
    LATENCY = args.latency
    print(f"{'concurrency':>12}{'success':>9}{'p50 step s':>12}{'p99 step s':>12}{'wall s':>9}")
    for n in (1, args.episodes):
        out = args.out / f"c{n}" if args.out else None
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
        ok, p50, p99, wall = asyncio.run(measure(n, out))
        print(f"{n:>12}{ok:>9.0%}{p50:>12.3f}{p99:>12.3f}{wall:>9.1f}")
    verdict = "PASS" if ok == 1.0 and p99 <= LATENCY * 1.5 else "FAIL"
    print(
        f"{args.episodes} episodes: success {ok:.0%}, p99 step {p99:.3f} s "
        f"(target <= {LATENCY * 1.5:.2f} s): {verdict}"
    )


if __name__ == "__main__":
    main()
