"""Instructions per rollout: the rollout machinery's cost as a count, for this checkout and,
with ``--ref``, another commit measured alike.

Claim: none of its own. It is the instrument for a change to the rollout path smaller than
this machine's CPU-time noise: on the shared 2-core VM a fixed pure-Python workload's CPU time
varies by up to 1.8x between processes, so ``benchmarks/rollout_cpu.py`` (the claim against
Verifiers) cannot tell a 5% change from the spread of its reps, while this count repeats
within about 1%.

Method: ``rollout_cpu.py``'s gymforge side without the HTTP exchange: ``run()`` on ``math``
over the same kind of jobs, concurrency 64, records written as ``gymforge run`` writes them,
``openai:bench`` on its lean request path with every request's bytes built as ever and the
exchange itself replaced by one answer of the test server (``gymforge.testing.openai_server``,
logprobs and token ids asked for, fetched once), which the policy reads as ever. Each
checkout runs it under valgrind's callgrind at two episode counts in fresh processes
(``PYTHONHASHSEED=0``); the difference in instructions over the difference in episodes is the
figure, imports and start-up cancelled out. ``--ref REV`` checks REV out into a temporary git
worktree and measures it the same way, on the same jobs and the same answer.

It is a count, not CPU time: under valgrind SHA-256 runs in software where the native code
uses the CPU's SHA extensions (the digest chain weighs several times more here), memory
stalls count nothing, and the kernel's share (sockets, fsync) is not counted. Nothing in
the run depends on the clock or on when the collector runs: the group commit never yields
within a batch (its time slice is made infinite) and writes its lines on the event loop
instead of in a thread (``asyncio.to_thread`` runs the write after one yield), and the
cyclic collector is off (natively it costs under 0.01 ms an episode,
``gymforge.rollout.gcpace``). Before, with the slice scaled by valgrind's slowdown, the
write in a thread and the collector on, the count followed the machine's load and where a
full collection fell: counts of one checkout differed by up to 10%; now they differ by up to
0.8% (2.1990 and 2.2065 M of one commit, 2.1994 and 2.2171 M of another a day later), so a
change under 1% needs two counts a side. Needs valgrind
(``apt-get install valgrind``).

Run: python benchmarks/rollout_instructions.py [--episodes 100 500] [--ref REV]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, gc, json, sys, tempfile
from pathlib import Path
from gymforge.registry.handle import open_env
from gymforge.rollout import run
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.json_http import JsonHttp
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.output import GroupCommit
from gymforge.rollout.spec import RunSpec

prompts_file, answer_file = sys.argv[1], sys.argv[2]
n = int(sys.argv[3])
gc.disable()  # when a full collection falls would decide a count
GroupCommit.SLICE_S = float("inf")  # the batches do not follow the clock


async def to_thread(func, /, *args, **kwargs):  # nor the writer thread's scheduling
    await asyncio.sleep(0)
    return func(*args, **kwargs)


asyncio.to_thread = to_thread
pairs = [(p["task_id"], p["seed"]) for p in json.load(open(prompts_file))]
answer = open(answer_file, "rb").read()


async def exchange(self, path, body, timeout, **_):
    await asyncio.sleep(0)  # the request's wait, without the request
    return 200, {}, answer


JsonHttp.exchange = exchange
handle = open_env("math", None)
factory = OpenAIPolicyFactory("bench", base_url="http://127.0.0.1:9/v1")


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        jobs = pairs[:n]
        spec = RunSpec(env="math", policy="openai:bench", jobs=jobs, out=Path(tmp), concurrency=64)
        result = await run(spec, LocalExecutor(handle.factory, factory))
    assert result.summary["episodes"] == n and factory.path() == "lean", result.summary

asyncio.run(main())
"""


def answer_bytes(first: dict[str, object]) -> bytes:
    """The test server's answer to the first job's request, as ``openai:`` asks it."""
    from gymforge.testing.openai_server import OpenAITestServer

    body = {
        "model": "bench",
        "messages": first["messages"],
        "seed": first["seed"],
        "logprobs": True,
        "return_token_ids": True,
    }
    with OpenAITestServer() as server:
        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            data: bytes = response.read()
    return data


def instructions(checkout: Path, prompts: str, answer: str, episodes: int) -> int:
    """callgrind's count of a whole run of ``episodes`` on ``checkout``'s gymforge."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += ["-c", CHILD, prompts, answer, str(episodes)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(checkout)}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=checkout)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or found is None:
        raise RuntimeError(
            f"{checkout}: the run failed ({done.returncode}):\n{done.stderr[-3000:]}"
        )
    return int(found.group(1))


def per_episode(checkout: Path, prompts: str, answer: str, counts: list[int]) -> float:
    low, high = (instructions(checkout, prompts, answer, n) for n in counts)
    return (high - low) / (counts[1] - counts[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, nargs=2, default=[100, 500])
    ap.add_argument("--ref", help="a commit to measure alike (a temporary git worktree)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    counts = sorted(args.episodes)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from rollout_cpu import math_prompts

    jobs = math_prompts(counts[1])
    with tempfile.TemporaryDirectory(prefix="rollout-instructions-") as tmp:
        prompts, answer = Path(tmp) / "prompts.json", Path(tmp) / "answer.json"
        prompts.write_text(json.dumps(jobs))
        answer.write_bytes(answer_bytes(jobs[0]))
        sides = {"this checkout": ROOT}
        if args.ref:
            ref = Path(tmp) / "ref"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(ref), args.ref],
                check=True,
                capture_output=True,
            )
            sides[args.ref] = ref
        try:
            figures = {
                name: per_episode(path, str(prompts), str(answer), counts)
                for name, path in sides.items()
            }
        finally:
            if args.ref:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref)],
                    capture_output=True,
                )
    print(
        f"instructions per single-turn math rollout, no HTTP ({counts[0]} vs {counts[1]} episodes)"
    )
    for name, figure in figures.items():
        print(f"  {name:<16} {figure / 1e6:.4f} M")
    if args.ref:
        print(f"this checkout / {args.ref}: {figures['this checkout'] / figures[args.ref]:.3f}x")


if __name__ == "__main__":
    main()
