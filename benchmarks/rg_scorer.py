"""What judging reasoning-gym answers in the sandbox costs, per answer.

Claim measured (no budget asserted): the latency of scoring one answer with a dataset's own
``score_answer`` in the bubblewrap sandbox (one job per answer: start-up imports of the
dataset's module, the call, the plain float back), p50 and p99, next to the in-process
figure (the baseline: ``score_answer`` called directly, as the adapter did before) in the
same run. Answers alternate between the stored answer and a wrong one; the sandbox runs
``--workers`` workers and the answers are judged ``--concurrency`` at a time, as a run
with that many episodes in flight would.

Run: python benchmarks/rg_scorer.py [--datasets leg_counting,n_queens,spiral_matrix] [--answers 40]
     [--workers 2] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import platform
import statistics
import time
from typing import Any

from gymforge.envs.reasoning_gym import env_class
from gymforge.envs.reasoning_gym.sandboxed import close_scorer_backend, score_in_sandbox


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def items(dataset: str, n: int) -> list[tuple[Any, ...]]:
    fam = env_class(dataset).family
    out = []
    for i in range(n):
        task = fam.task(1, i // 2)
        entry = fam.entry(1, task.truth["item_seed"])
        answer = task.truth["answer"] if i % 2 == 0 else "not the answer"
        out.append((fam, entry, str(answer)))
    return out


def in_process(cases: list[tuple[Any, ...]]) -> list[float]:
    times = []
    for fam, entry, answer in cases:
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            fam.scorer(1).score_answer(answer, entry)
        times.append(time.perf_counter() - t0)
    return times


async def sandboxed(cases: list[tuple[Any, ...]], concurrency: int) -> list[float]:
    gate = asyncio.Semaphore(concurrency)
    times: list[float] = []

    async def one(fam: Any, entry: Any, answer: str) -> None:
        async with gate:
            dataset_cls, config_cls = fam.classes()
            t0 = time.perf_counter()
            await score_in_sandbox(dataset_cls, config_cls, fam.configs[0], entry, answer)
            times.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(*c) for c in cases))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="leg_counting,n_queens,spiral_matrix")
    ap.add_argument("--answers", type=int, default=40, help="answers per dataset")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    os.environ["GYMFORGE_RG_SCORER_WORKERS"] = str(args.workers)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'dataset':<18} {'in-process p50/p99 ms':>22} {'sandboxed p50/p99 ms':>22}")
    try:
        for dataset in args.datasets.split(","):
            cases = items(dataset, args.answers)
            asyncio.run(sandboxed(cases[:2], 1))  # workers started, first imports cached
            base = in_process(cases)
            boxed = asyncio.run(sandboxed(cases, args.concurrency))
            print(
                f"{dataset:<18} "
                f"{statistics.median(base) * 1e3:>10.2f} / {percentile(base, 0.99) * 1e3:<9.2f}"
                f"{statistics.median(boxed) * 1e3:>10.1f} / {percentile(boxed, 0.99) * 1e3:<9.1f}"
            )
    finally:
        close_scorer_backend()


if __name__ == "__main__":
    main()
