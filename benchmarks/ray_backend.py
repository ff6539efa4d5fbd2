"""Local versus Ray executor throughput, on the same jobs in the same run.

Method: ``N`` ledger episodes (``N/4`` tasks x group 4) played by the oracle policy through
the one runner (``gymforge.rollout.run``), first on its ``LocalExecutor`` (one process,
``ACTORS x CONCURRENCY`` episodes in flight, the same total as Ray), then on its
``RayExecutor`` (``ACTORS`` async actors with ``max_concurrency``), both writing
``trajectories.jsonl`` through the runner's group-committing writer. Two policies:

- ``oracle``: zero latency, so CPU-bound (environment, records, sealing, fsync);
- ``oracle+20ms``: the oracle behind 20 ms of simulated model latency per turn.

``ray.init`` (about 4 s on this machine) is timed apart and left out of the throughput;
actor start-up is included. The ratio is Ray episodes/s over local episodes/s.
Run: python benchmarks/ray_backend.py [N]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.registry.handle import open_env
from gymforge.rollout import LocalExecutor, OraclePolicy, PolicyTurn, RunSpec, expand, run
from gymforge.rollout.executors.ray import RayExecutor
from gymforge.trajectory.io import read_episodes, verify_chain

N = int(sys.argv[1]) if len(sys.argv) > 1 else 400
GROUP = 4
ACTORS = 2
CONCURRENCY = 16


class LatencyOracle(OraclePolicy):
    """The oracle with 20 ms of simulated model latency per turn."""

    async def act(self, observation: Observation) -> PolicyTurn:
        await asyncio.sleep(0.02)
        return await super().act(observation)


def check(out: str, n: int) -> None:
    logs = read_episodes(os.path.join(out, "trajectories.jsonl"))
    for log in logs:
        verify_chain(log)
    keys = {(g.end.task_id, g.end.seed, g.end.rollout) for g in logs if g.end}
    assert len(logs) == n == len(keys), (len(logs), len(keys), n)


def timed(label: str, fn: Callable[[str], Any], n: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        result = asyncio.run(fn(out))
        elapsed = time.perf_counter() - t0
        check(out, n)
    s = result.summary
    rate = n / elapsed
    print(
        f"  {label:<24} {n} episodes in {elapsed:6.2f} s = {rate:7.1f} episodes/s  "
        f"(success {s['success_rate']:.2f}, mean steps {s['mean_steps']:.1f})"
    )
    return rate


def main() -> None:
    import ray

    pairs = [(t, 7) for t in LedgerEnv.tasks.sample(N // GROUP, 0)]
    jobs = expand(pairs, GROUP)
    factory = open_env("ledger").factory
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    t0 = time.perf_counter()
    ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # LatencyOracle
    print(f"ray.init: {time.perf_counter() - t0:.1f} s (not counted below)")
    print(f"{len(jobs)} ledger episodes, {os.cpu_count()} cores, {ACTORS} actors")
    try:
        for name, policy in (("oracle", OraclePolicy), ("oracle+20ms", LatencyOracle)):
            print(f"policy {name}:")
            local = timed(
                f"local (concurrency {ACTORS * CONCURRENCY})",
                lambda out, p=policy, label=name: run(
                    RunSpec(
                        env="ledger",
                        policy=label,
                        jobs=jobs,
                        out=out,
                        concurrency=ACTORS * CONCURRENCY,
                    ),
                    LocalExecutor(factory, p),
                ),
                len(jobs),
            )
            remote = timed(
                f"ray ({ACTORS}x{CONCURRENCY})",
                lambda out, p=policy, label=name: run(
                    RunSpec(env="ledger", policy=label, backend="ray", jobs=jobs, out=out),
                    RayExecutor(policy=p, actors=ACTORS, max_concurrency=CONCURRENCY),
                ),
                len(jobs),
            )
            print(f"  ratio ray/local: {remote / local:.2f}x")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
