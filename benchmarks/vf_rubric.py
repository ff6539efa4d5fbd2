"""What scoring a Verifiers rollout in the sandbox costs, per rollout.

Claim measured (no budget asserted): the latency of one rubric score in the bubblewrap
sandbox (one job per rollout: start-up loads the environment module with Verifiers, then
the ``score_rollout`` call, plain floats back), p50 and p99, next to the in-process figure
(the baseline: ``rubric.score_rollout`` called directly, as the adapter did before) in the
same run. Completions alternate between the row's answer and a wrong one; ``--concurrency``
rollouts are scored at a time, as a run with that many episodes in flight would.

Needs ``.venv-interop`` (Verifiers 0.3.1), run from the repository root:
    PYTHONPATH=$PWD .venv-interop/bin/python benchmarks/vf_rubric.py
        [--module tests.interop.vf_eval_rubric] [--rollouts 20] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from typing import Any

from gymforge.envs.third_party_scoring import close_scorer_backend
from gymforge.envs.verifiers_adapter import env_class
from gymforge.envs.verifiers_adapter.episode import VfEpisode


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def episodes(module: str, n: int) -> list[VfEpisode]:
    cls = env_class(module)  # built (and its oracle probed) before the event loop runs
    rows = [t.truth["row"] for t in cls.tasks.datasets[0].tasks]
    out = []
    for i in range(n):
        row = rows[(i // 2) % len(rows)]
        episode = await VfEpisode.start(cls.vf_env, module, row)
        await episode.reply(str(row.get("answer")) if i % 2 == 0 else "not the answer")
        out.append(episode)
    return out


async def timed(module: str, n: int, concurrency: int, boxed: bool) -> list[float]:
    gate = asyncio.Semaphore(concurrency)
    times: list[float] = []

    async def one(episode: VfEpisode) -> None:
        async with gate:
            t0 = time.perf_counter()
            await (episode.score() if boxed else episode.score_trusted())
            times.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(e) for e in await episodes(module, n)))
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="tests.interop.vf_eval_rubric")
    ap.add_argument("--rollouts", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} CPUs; module {args.module}")
    env_class(args.module)
    try:
        asyncio.run(timed(args.module, 2, 1, boxed=True))  # workers started
        plain: list[Any] = asyncio.run(timed(args.module, args.rollouts, 1, boxed=False))
        boxed = asyncio.run(timed(args.module, args.rollouts, args.concurrency, boxed=True))
    finally:
        close_scorer_backend()
    for name, t in (("in-process", plain), ("sandboxed", boxed)):
        ms = [x * 1e3 for x in t]
        print(
            f"{name:<11} p50 {statistics.median(ms):8.1f} ms  p99 {percentile(ms, 0.99):8.1f} ms"
            f"  ({len(ms)} rollouts)"
        )


if __name__ == "__main__":
    main()
