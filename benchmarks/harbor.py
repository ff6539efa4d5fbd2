"""Harbor tasks on the container engine: what the engine costs an episode.

Measures, on the fixture task ``tests/harbor/fixtures/dataset/hello-shell`` (a
``gymforge-base-python`` image, ``make containers``):

- image build, cold (the task's tag removed first) and cached (the tag exists: one lookup);
- container start (``run -d`` of the image, ``--network none``, plus the workspace mkdir);
- one ``run`` tool call (``podman exec`` of a trivial command);
- ``test.sh`` latency (the whole judging: kill the agent's container, copy the workspace
  out, start a fresh verifier container with three mounts, run ``test.sh``, read the reward);
- oracle episodes per minute with ``--concurrency`` episodes in flight (default 16), each on
  its own environment instance.

Wall-clock figures of a shared machine: read them as orders of magnitude.
Run: python benchmarks/harbor.py [--concurrency 16] [--episodes 32]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from gymforge.envs.harbor.container import AgentBox, engine_run, judge
from gymforge.envs.harbor.env import HarborEnv
from gymforge.envs.harbor.images import ensure_image, image_tag
from gymforge.envs.harbor.taskdir import read_task
from gymforge.registry.resolve import make_env

TASK = Path(__file__).resolve().parents[1] / "tests/harbor/fixtures/dataset/hello-shell"


def ms(xs: list[float]) -> str:
    return f"p50 {statistics.median(xs) * 1e3:7.0f} ms  max {max(xs) * 1e3:7.0f} ms  (n={len(xs)})"


async def parts(repeat: int) -> None:
    task = read_task(TASK)
    tag = image_tag(task)
    await engine_run("rmi", "-f", tag, timeout=120)
    t0 = time.perf_counter()
    await ensure_image(task)
    print(f"image build, cold      {(time.perf_counter() - t0) * 1e3:7.0f} ms")
    cached, starts, execs, judged = [], [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        image = await ensure_image(task)
        cached.append(time.perf_counter() - t0)
        box = AgentBox(task, image, "/app")
        t0 = time.perf_counter()
        await box.start()
        starts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await box.exec("echo hello, harbor > greeting.txt", 30, 4096)
        execs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await judge(task, image, "/app", box, 2000)
        judged.append(time.perf_counter() - t0)
        await box.remove()
    print(f"image build, cached    {ms(cached)}")
    print(f"container start        {ms(starts)}")
    print(f"one run (exec)         {ms(execs)}")
    print(f"test.sh (judging)      {ms(judged)}")


async def episode(task_id: str, seed: int) -> bool:
    env = make_env(f"harbor:{TASK}")
    assert isinstance(env, HarborEnv)
    try:
        await env.reset(task_id, seed)
        while True:
            r = await env.step(await env.oracle_action())
            if r.terminated or r.truncated:
                return bool(r.info.get("success"))
    finally:
        await env.close()


async def throughput(concurrency: int, episodes: int) -> None:
    env = make_env(f"harbor:{TASK}")
    assert isinstance(env, HarborEnv)
    (task_id,) = env.harbor_tasks
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> bool:
        async with gate:
            return await episode(task_id, i)

    t0 = time.perf_counter()
    ok = await asyncio.gather(*(one(i) for i in range(episodes)))
    took = time.perf_counter() - t0
    print(
        f"oracle episodes        {episodes / took * 60:7.1f} per minute at concurrency "
        f"{concurrency} ({episodes} episodes, {sum(ok)} passed, {took:.0f} s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    asyncio.run(parts(a.repeat))
    asyncio.run(throughput(a.concurrency, a.episodes))


if __name__ == "__main__":
    main()
