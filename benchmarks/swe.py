"""``swe`` reset latency and step throughput.

Claim: a repository resets from its template in well under 50 ms: a warm ``env.reset`` (the
task seen before) is at least 10x faster (p50) than writing the same repository into a fresh
directory or extracting it from a tar snapshot (the baselines, measured in the same run; how
much faster depends on the filesystem: 33-87x in our runs),
and a cold reset (generate the task, then copy) costs p50 < 50 ms of CPU. Wall-clock and CPU
figures are both printed; on a shared machine the CPU figures are the environment's own
cost. Steps per second are reported for editor
steps (in-process), sandbox steps (``run_tests``, ``run_command``: one sandbox job each) and
whole oracle episodes.

Method, on the same tasks in one run (sizes 1-3, every training family):

- ``env reset warm``: ``env.reset`` on a task seen before (the workspace is a copy of the
  template's dict of files);
- ``env reset cold``: ``env.reset`` on a task never seen (generate the repository, its
  checks and issue, then copy);
- ``baseline: write dir``: the same files written into a fresh temporary directory;
- ``baseline: untar``: the same files extracted from an in-memory tar snapshot;
- steps: ``read_file``/``search``/``edit_file`` steps, ``run_tests`` steps, and full oracle
  episodes (verdict included), each the fastest of ``PASSES`` passes.

Run: python benchmarks/swe.py [--tasks N]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import statistics
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from gymforge.core.types import Reply, ToolCall
from gymforge.envs.swe import TRAIN_FAMILIES, SweEnv

PASSES = 3


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def line(name: str, ms: list[float]) -> dict[str, Any]:
    row = {"name": name, "p50_ms": statistics.median(ms), "p99_ms": pct(ms, 0.99), "n": len(ms)}
    print(f"{name:28s} p50 {row['p50_ms']:8.3f} ms   p99 {row['p99_ms']:8.3f} ms   n={len(ms)}")
    return row


def write_dir(files: dict[str, str]) -> None:
    root = Path(tempfile.mkdtemp(prefix="swe-bench-"))
    try:
        for p, t in files.items():
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_text(t)
    finally:
        shutil.rmtree(root)


def tar_of(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for p, t in files.items():
            data = t.encode()
            info = tarfile.TarInfo(p)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def untar(blob: bytes) -> None:
    root = tempfile.mkdtemp(prefix="swe-bench-")
    try:
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            tar.extractall(root, filter="data")
    finally:
        shutil.rmtree(root)


def timed(fn: Any, *args: Any) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1e3


async def steps_per_s(env: SweEnv, ids: list[str], kind: str) -> float:
    best = 0.0
    for _ in range(PASSES):
        n, spent = 0, 0.0
        for i, tid in enumerate(ids):
            await env.reset(tid, i)
            files = env.truth.files
            module = next(p for p in sorted(files) if p.endswith(".py") and "tests/" not in p)
            if kind == "editor":
                actions = [
                    ToolCall(name="read_file", arguments={"path": module}),
                    ToolCall(name="search", arguments={"pattern": "def ", "path_glob": "*.py"}),
                    ToolCall(name="list_files", arguments={}),
                ]
            elif kind == "sandbox":
                actions = [ToolCall(name="run_tests", arguments={})]
            else:
                actions = list(env.oracle_plan(env.task) or []) if env.task else []
            for a in actions:
                t0 = time.perf_counter()
                r = await env.step(a)
                spent += time.perf_counter() - t0
                n += 1
                if r.done:
                    break
            if kind == "oracle":
                assert r.info["success"], r.info.get("verdict")
            elif not isinstance(actions[-1], Reply):
                await env.step(Reply(text="done"))
        best = max(best, n / spent)
    print(f"{kind + ' steps':28s} {best:10.1f} steps/s")
    return best


async def main(n_tasks: int) -> None:
    env = SweEnv()
    ids = [
        f.task_id(d, s)
        for s in range(n_tasks)
        for f in env.tasks.families.values()
        if f.name in TRAIN_FAMILIES
        for d in (1, 2, 3)
    ]
    cold, cold_cpu, warm, copy_dir, tar_x = [], [], [], [], []
    for i, tid in enumerate(ids):
        t0, c0 = time.perf_counter(), time.process_time()
        await env.reset(tid, i)
        cold.append((time.perf_counter() - t0) * 1e3)
        cold_cpu.append((time.process_time() - c0) * 1e3)
    for rep in range(5):
        for i, tid in enumerate(ids):
            t0 = time.perf_counter()
            await env.reset(tid, rep * len(ids) + i)
            warm.append((time.perf_counter() - t0) * 1e3)
    for tid in ids:
        files = env.truth_of(env.tasks.resolve(tid)).files
        blob = tar_of(files)
        copy_dir.append(timed(write_dir, files))
        tar_x.append(timed(untar, blob))
    n_files = sum(len(env.truth_of(env.tasks.resolve(t)).files) for t in ids) / len(ids)
    print(f"swe: {len(ids)} tasks, {n_files:.1f} files each")
    w = line("env reset warm", warm)
    line("env reset cold", cold)
    c = line("env reset cold (CPU)", cold_cpu)
    d = line("baseline: write dir", copy_dir)
    t = line("baseline: untar", tar_x)
    print(
        f"warm reset is {d['p50_ms'] / w['p50_ms']:.0f}x faster than writing a directory, "
        f"{t['p50_ms'] / w['p50_ms']:.0f}x faster than untar (p50)"
    )
    await steps_per_s(env, ids[:12], "editor")
    await steps_per_s(env, ids[:12], "sandbox")
    await steps_per_s(env, ids[:12], "oracle")
    fast = min(d["p50_ms"], t["p50_ms"]) / w["p50_ms"]
    assert fast >= 10 and c["p50_ms"] < 50.0, "the reset claim does not hold here"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=5, help="seeds per family and level")
    asyncio.run(main(ap.parse_args().tasks))
