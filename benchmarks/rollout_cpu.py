"""Rollout CPU per episode: gymforge against the bare SDK calls (and Verifiers, when present).

Claim: a gymforge rollout (``gymforge run math --policy openai:MODEL``: environment, policy,
records validated, digest-chained and written with fsync) costs at most 0.15x the client CPU
per episode of Verifiers 0.3.1's ``SingleTurnEnv`` on the same server, prompts and
concurrency. The Verifiers side runs only where ``.venv-interop`` exists (``make
test-interop`` builds it).

The claim every checkout can check alone, against its own mock server: gymforge costs at
most ``TARGET_VS_BARE`` (0.45) times the client CPU of the bare SDK calls measured in the
same run (the same requests through the SDK, nothing else). That is the Verifiers claim
carried over by Verifiers' own cost in bare calls: its ``SingleTurnEnv`` measured 3.03x to
4.99x the bare SDK calls per episode in the runs on this machine (2-core x86_64, load
average 1 to 13; the script prints that ratio whenever Verifiers runs, so the carry-over
stays checked), and 0.15 x 3.0 = 0.45.

Method: the local OpenAI-compatible test server (``gymforge.testing.openai_server``, zero
latency, 200-character replies) runs in its own process, so its CPU is never counted. Each
side runs in a fresh worker process that measures its own CPU (``time.process_time``: every
thread, the trajectory writer's included) over ``--rollouts`` single-turn episodes at
``--concurrency``, after a discarded warm-up of one batch on the same client:

- ``gymforge``: ``run()`` on the ``math`` environment with ``openai:bench``, writing
  ``trajectories.jsonl`` as the CLI does (no seal key), on the policy's default request path
  (``"auto"``: gymforge's own JSON client where it does what the SDK would, here);
- ``gymforge-sdk``: the same with ``request_path="fast"`` (the request through the SDK's
  generic ``client.post``);
- ``bare``: the same requests with no environment and no records: the body gymforge sends
  (messages, seed, ``logprobs``, ``return_token_ids``) posted with the SDK's generic
  ``client.post`` on the transport gymforge picks (aiohttp when installed) and the answer
  decoded with ``jiter``, as a client that keeps the whole answer would;
- ``lean``: the same requests over gymforge's own keep-alive JSON client
  (``gymforge.rollout.json_http``, used for ``/tokenize``) instead of the SDK: how much of
  ``bare`` is the SDK and httpx rather than the calls themselves;
- ``verifiers``: ``SingleTurnEnv.evaluate`` over the same prompts with its defaults (its
  requests ask for no token ids), a parser and an exact-match rubric, results in memory.

Workers take turns (each side in turn, ``--reps`` times, 5 by default: on the 2-core VM a
single rep of one side varied by up to 1.5x within a run) so a change in the machine's load
hits them alike; the figure is each side's median over reps, and the ratios
are of medians. The server answers each distinct request from its cache once it has
answered it, and every side is answered from the cache alike: the cache holds every request
of every side, and a first turn of every side (``--warm-reps``, discarded) fills it. A
server that computes its answer is slower, and a client waiting on a slower server wakes
for each answer alone and spends more CPU per request (in the last run with the old cache,
gymforge's first rep, on a cold server, took 0.98 ms per episode against 0.54 and 0.68 in
the reps after it). Before, the cache held 4,096 answers:
the first sides filled it, so Verifiers' requests were never answered from it and
gymforge's first rep never was. gymforge-sdk/bare is what gymforge itself adds to the SDK's
calls, and gymforge/lean what it adds to its own client's.

Run: python benchmarks/rollout_cpu.py [--rollouts 2000] [--concurrency 64] [--reps 5]
[--warm-reps 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_VS_VERIFIERS = 0.15
VERIFIERS_OVER_BARE = 3.0
"""Below the lowest ratio of Verifiers' CPU per episode to the bare SDK calls' measured here."""
TARGET_VS_BARE = round(TARGET_VS_VERIFIERS * VERIFIERS_OVER_BARE, 2)
MODEL = "bench"
HERE = Path(__file__).resolve().parent
INTEROP_PYTHON = HERE.parent / ".venv-interop" / "bin" / "python"


# --- workers (each in its own process; only the standard library is imported at the top, so
# the Verifiers worker runs in .venv-interop without gymforge) -----------------------------


def gymforge_worker(
    args: argparse.Namespace, prompts: list[dict[str, Any]], sdk: bool = False
) -> float:
    from gymforge.registry.handle import open_env
    from gymforge.rollout import run
    from gymforge.rollout.executors import LocalExecutor
    from gymforge.rollout.openai_policy import OpenAIPolicyFactory
    from gymforge.rollout.spec import RunSpec

    handle = open_env("math", None)
    factory = OpenAIPolicyFactory(
        MODEL, base_url=args.base_url, request_path="fast" if sdk else "auto"
    )
    pairs = [(p["task_id"], p["seed"]) for p in prompts]
    warm = pairs[: args.concurrency]

    async def play(jobs: list[tuple[str, int]], out: Path) -> float:
        spec = RunSpec(
            env="math", policy=f"openai:{MODEL}", jobs=jobs, out=out, concurrency=args.concurrency
        )
        cpu0 = time.process_time()
        result = await run(spec, LocalExecutor(handle.factory, factory))
        cpu = time.process_time() - cpu0
        if result.summary["episodes"] != len(jobs) or result.errors:
            raise RuntimeError(f"gymforge run incomplete: {result.summary} {result.errors[:3]}")
        return cpu

    async def main() -> float:
        with tempfile.TemporaryDirectory() as tmp:
            await play(warm, Path(tmp) / "warm")
            cpu = await play(pairs, Path(tmp) / "run")
        if factory.path() != ("fast" if sdk else "lean"):
            raise RuntimeError(f"request path {factory.path()}: {factory.sdk_reason}")
        await factory.aclose()
        return cpu

    return asyncio.run(main())


def bare_worker(args: argparse.Namespace, prompts: list[dict[str, Any]]) -> float:
    import jiter
    import openai

    try:  # the SDK's HTTP library, as gymforge.rollout.server_http imports it
        import httpx2 as httpx
    except ImportError:
        import httpx  # type: ignore[no-redef]

    async def main() -> float:
        limits = httpx.Limits(max_connections=4096, max_keepalive_connections=4096)
        try:  # the transport gymforge's factory picks by default (rollout.server)
            import aiohttp  # noqa: F401

            http: Any = openai.DefaultAioHttpClient(limits=limits)
        except ImportError:
            http = openai.DefaultAsyncHttpxClient(limits=limits)
        client = openai.AsyncOpenAI(
            base_url=args.base_url, api_key="bench", max_retries=0, http_client=http
        )
        sem = asyncio.Semaphore(args.concurrency)

        async def call(p: dict[str, Any]) -> None:
            body = {
                "model": MODEL,
                "messages": p["messages"],
                "seed": p["seed"],
                "logprobs": True,
                "return_token_ids": True,
            }
            async with sem:
                r = await client.post("/chat/completions", body=body, cast_to=httpx.Response)
            if not jiter.from_json(r.content)["choices"]:
                raise RuntimeError("no choices")

        await asyncio.gather(*(call(p) for p in prompts[: args.concurrency]))
        cpu0 = time.process_time()
        await asyncio.gather(*(call(p) for p in prompts))
        cpu = time.process_time() - cpu0
        await client.close()
        return cpu

    return asyncio.run(main())


def lean_worker(args: argparse.Namespace, prompts: list[dict[str, Any]]) -> float:
    import jiter

    from gymforge.rollout.json_http import JsonHttp

    http = JsonHttp(args.base_url, {"Authorization": "Bearer bench"})

    async def main() -> float:
        sem = asyncio.Semaphore(args.concurrency)

        async def call(p: dict[str, Any]) -> None:
            body = {
                "model": MODEL,
                "messages": p["messages"],
                "seed": p["seed"],
                "logprobs": True,
                "return_token_ids": True,
            }
            async with sem:
                status, data = await http.post("/chat/completions", json.dumps(body).encode(), 60)
            if status != 200 or not jiter.from_json(data)["choices"]:
                raise RuntimeError(f"status {status}")

        await asyncio.gather(*(call(p) for p in prompts[: args.concurrency]))
        cpu0 = time.process_time()
        await asyncio.gather(*(call(p) for p in prompts))
        cpu = time.process_time() - cpu0
        await http.aclose()
        return cpu

    return asyncio.run(main())


def verifiers_worker(args: argparse.Namespace, prompts: list[dict[str, Any]]) -> float:
    import logging

    import openai
    import verifiers.legacy as vf
    from datasets import Dataset
    from verifiers.legacy.clients import OpenAIChatCompletionsClient

    logging.disable(logging.WARNING)
    parser = vf.Parser()

    def exact(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "") == answer else 0.0

    rows = [{"prompt": p["messages"], "answer": "42"} for p in prompts]
    env = vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        parser=parser,
        rubric=vf.Rubric(funcs=[exact], parser=parser),
    )
    warm = env.get_eval_dataset().select(range(args.concurrency)).to_list()  # formatted rows

    async def main() -> float:
        sdk = openai.AsyncOpenAI(base_url=args.base_url, api_key="bench", max_retries=0)
        client = OpenAIChatCompletionsClient(sdk)
        quiet = {"on_progress": lambda *a, **k: None, "on_start": lambda *a, **k: None}
        await env.generate(warm, client, MODEL, max_concurrent=args.concurrency, **quiet)
        cpu0 = time.process_time()
        out = await env.evaluate(
            client, MODEL, num_examples=len(rows), max_concurrent=args.concurrency, **quiet
        )
        cpu = time.process_time() - cpu0
        if len(out["outputs"] if isinstance(out, dict) else out.outputs) != len(rows):
            raise RuntimeError("verifiers evaluate returned the wrong number of rollouts")
        await sdk.close()
        return cpu

    return asyncio.run(main())


WORKERS = {
    "gymforge": gymforge_worker,
    "gymforge-sdk": lambda args, prompts: gymforge_worker(args, prompts, sdk=True),
    "bare": bare_worker,
    "lean": lean_worker,
    "verifiers": verifiers_worker,
}


# --- the driver ---------------------------------------------------------------------------


def math_prompts(rollouts: int) -> list[dict[str, Any]]:
    """The jobs of a ``math`` run of ``rollouts`` tasks with the messages of their resets:
    what gymforge's policy sends, and what the other sides send too."""
    from gymforge.registry.handle import open_env
    from gymforge.rollout.jobs import epoch_jobs
    from gymforge.rollout.parsing import message_dict

    handle = open_env("math", None)
    assert handle.tasks is not None
    jobs = epoch_jobs(handle.tasks.sample(rollouts, 0, "train"), 0, 1)

    async def resets() -> list[dict[str, Any]]:
        env, out = handle.factory(), []
        for job in jobs:
            obs = await env.reset(job.task_id, job.seed)
            messages = [message_dict(m) for m in obs.messages]
            out.append({"task_id": job.task_id, "seed": job.seed, "messages": messages})
        await env.close()
        return out

    return asyncio.run(resets())


def run_worker(
    side: str, args: argparse.Namespace, prompts_file: str, base_url: str, script: str = __file__
) -> float:
    """``side``'s CPU seconds over the prompts, from a fresh ``script --worker side``."""
    python = str(INTEROP_PYTHON) if side == "verifiers" else sys.executable
    cmd = [python, script, "--worker", side, "--prompts", prompts_file, "--base-url", base_url]
    cmd += ["--concurrency", str(args.concurrency)]
    env = {**os.environ, "TQDM_DISABLE": "1"}
    if side == "verifiers":
        env.pop("PYTHONPATH", None)  # the interop venv has its own packages
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("CPU ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{side} worker failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return float(lines[-1].split()[1])


def interleaved(
    sides: list[str], args: argparse.Namespace, run: Callable[[str, str, str], float]
) -> dict[str, list[float]]:
    """Each side's CPU seconds per rep: ``run(side, prompts_file, base_url)`` for every side
    in turn (load changes hit every side alike), ``args.warm_reps`` turns discarded, then
    ``args.reps`` kept, against one test server in its own process; prints the run's
    header (the machine's load before and after)."""
    from openai_concurrency import start_server  # the same test server, its own process

    load0 = os.getloadavg()[0]

    prompts = math_prompts(args.rollouts)
    # room for every side's requests (their bodies differ), warm-up batches included
    proc, base_url = start_server(0.0, len(sides) * (args.rollouts + args.concurrency) + 1024)
    cpu: dict[str, list[float]] = {s: [] for s in sides}
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(prompts, f)
            f.flush()
            for rep in range(args.warm_reps + args.reps):
                for side in sides:
                    spent = run(side, f.name, base_url)
                    if rep >= args.warm_reps:
                        cpu[side].append(spent)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    print(
        f"{args.rollouts} single-turn math rollouts at concurrency {args.concurrency}, "
        f"zero-latency server in its own process; {os.cpu_count()} cores, load average "
        f"{load0:.2f} -> {os.getloadavg()[0]:.2f}; median of {args.reps} interleaved reps "
        f"after {args.warm_reps} discarded, every answer from the server's cache"
    )
    return cpu


def parser(description: str, workers: list[str]) -> argparse.ArgumentParser:
    """The options of a run of ``interleaved`` sides (and of a worker, ``workers``)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--rollouts", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warm-reps", type=int, default=1, help="turns of every side, discarded")
    ap.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)
    ap.add_argument("--prompts", help=argparse.SUPPRESS)
    ap.add_argument("--base-url", help=argparse.SUPPRESS)
    return ap


def main() -> None:
    ap = parser(__doc__.splitlines()[0], sorted(WORKERS))
    ap.add_argument("--no-verifiers", action="store_true", help="skip Verifiers even if present")
    args = ap.parse_args()
    if args.worker:
        prompts = json.loads(Path(args.prompts).read_text())
        print(f"CPU {WORKERS[args.worker](args, prompts):.6f}", flush=True)
        return

    sides = ["gymforge", "gymforge-sdk", "bare", "lean"]
    if INTEROP_PYTHON.exists() and not args.no_verifiers:
        sides.append("verifiers")
    else:
        print("Verifiers side skipped (no .venv-interop: `make test-interop` builds it)")
    cpu = interleaved(sides, args, lambda side, f, url: run_worker(side, args, f, url))
    n = args.rollouts
    ms = {s: statistics.median(v) / n * 1e3 for s, v in cpu.items()}
    print(f"{'side':<14}{'CPU ms/episode':>16}   reps (ms/episode)")
    for s in sides:
        reps = ", ".join(f"{c / n * 1e3:.3f}" for c in cpu[s])
        print(f"{s:<14}{ms[s]:>16.3f}   {reps}")
    print(
        f"gymforge-sdk / bare SDK calls: {ms['gymforge-sdk'] / ms['bare']:.2f}x (gymforge adds "
        f"{ms['gymforge-sdk'] - ms['bare']:.3f} ms per episode); the SDK's own share: "
        f"bare / lean {ms['bare'] / ms['lean']:.2f}x"
    )
    print(
        f"gymforge / lean calls: {ms['gymforge'] / ms['lean']:.2f}x "
        f"(gymforge adds {ms['gymforge'] - ms['lean']:.3f} ms per episode)"
    )
    verdicts = [_verdict("gymforge / bare SDK calls", cpu["gymforge"], cpu["bare"], TARGET_VS_BARE)]
    if "verifiers" in ms:
        print(
            f"Verifiers / bare SDK calls: {ms['verifiers'] / ms['bare']:.2f}x (the carry-over "
            f"of the Verifiers-free claim assumes >= {VERIFIERS_OVER_BARE})"
        )
        for side in ("gymforge", "gymforge-sdk"):
            verdicts.append(
                _verdict(f"{side} / Verifiers", cpu[side], cpu["verifiers"], TARGET_VS_VERIFIERS)
            )
    for line in verdicts:
        print(line)


def _verdict(label: str, side: list[float], anchor: list[float], target: float) -> str:
    """``label: ratio of medians (per-rep ratios; target): PASS/FAIL``."""
    ratio = statistics.median(side) / statistics.median(anchor)
    reps = ", ".join(f"{a / b:.2f}" for a, b in zip(side, anchor, strict=True))
    verdict = "PASS" if ratio <= target else "FAIL"
    return f"{label}: {ratio:.2f}x (reps {reps}; target <= {target}): {verdict}"


if __name__ == "__main__":
    main()
