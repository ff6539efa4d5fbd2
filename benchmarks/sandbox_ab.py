"""Paired A/B of the sandbox between this checkout and another (e.g. a worktree of the parent
commit), in the same run: does a change slow the sandbox down?

Each side is a long-lived process of its own checkout (its own ``gymforge`` and its own
``benchmarks/sandbox.py`` workloads; the other checkout needs a copy of this file's version of
``benchmarks/sandbox.py``) with a two-worker backend. The driver alternates short batches of
each workload between the sides (order flipped every round), so both see the same machine
load, and prints per workload the medians and the **paired median ratio new/base** of p50
latency, CPU per item (host + sandbox) and wall per item. Workloads: a cached C++ run on stdin,
a HumanEval-format verdict through ``CodeJudge``, a 7-call batch and a 7-call session.

    git worktree add /tmp/base HEAD~1 && cp benchmarks/sandbox.py /tmp/base/benchmarks/
    .venv/bin/python benchmarks/sandbox_ab.py --base /tmp/base [--rounds 12] [--n 40]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = ("cpp", "judge", "batch", "session")
METRICS = ("p50", "cpu", "wall")


def serve(root: str, uid_base: int) -> None:
    """One side: run ``OP N`` requests from stdin, answer one JSON line each."""
    sys.path[:0] = [root, f"{root}/benchmarks"]
    import sandbox as bench  # that checkout's benchmarks/sandbox.py

    from gymforge.sandbox import get_backend
    from gymforge.verify.code import CodeJudge, JudgeConfig

    backend = get_backend("local", workers=2, uid_base=uid_base)
    judge = CodeJudge(backend, JudgeConfig(limits=bench.LIMITS))
    ops = {
        "cpp": lambda: bench.cached_cpp_run(backend),
        "judge": lambda: bench.gymforge_check_judge(judge),
        "batch": lambda: bench.gymforge_check_batch(backend),
        "session": lambda: bench.gymforge_check_session(backend),
    }
    backend.run(bench.CPP_JOB)  # compiled once: every measured run is a cache hit
    for fn in ops.values():
        for _ in range(5):
            fn()
    answer(ops, lambda: bench.sandbox_cpu(backend))
    backend.close()


def answer(ops: Mapping[str, Callable[[], object]], worker_cpu: Callable[[], float]) -> None:
    """Say ``ready``, then answer each ``OP N`` line on stdin with one JSON line: p50 latency,
    CPU (this process plus ``worker_cpu()``) and wall per item. An op returning ``False``
    failed: the benchmark would not be measuring a pass."""
    print("ready", flush=True)
    for line in sys.stdin:
        op, n = line.split()
        h0, s0, t0 = time.process_time(), worker_cpu(), time.perf_counter()
        lat = []
        for _ in range(int(n)):
            t = time.perf_counter()
            if ops[op]() is False:
                raise SystemExit(f"{op} failed: the benchmark is not measuring a pass")
            lat.append(time.perf_counter() - t)
        cpu = time.process_time() - h0 + worker_cpu() - s0
        wall = time.perf_counter() - t0
        row = {"p50": statistics.median(lat), "cpu": cpu / len(lat), "wall": wall / len(lat)}
        print(json.dumps(row), flush=True)


def paired(
    script: str, base: str, ops: tuple[str, ...], rounds: int, n: int, uid_base: int = 130_000
) -> None:
    """Start ``script --serve ROOT UID`` for both checkouts, alternate ``OP N`` batches between
    them (order flipped every round) and print the paired median ratios per op and metric.
    Also the driver of ``math_ab.py``."""
    sides: dict[str, subprocess.Popen[str]] = {}
    for i, (name, root) in enumerate((("base", base), ("new", str(ROOT)))):
        env = dict(os.environ, PYTHONPATH=root, GYMFORGE_SANDBOX_CACHE=f"/var/tmp/gf-ab-{name}")
        sides[name] = p = subprocess.Popen(
            [sys.executable, script, "--serve", root, str(uid_base + 10 * i)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root,  # what a child interpreter finds first on its path is that checkout too
        )
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", name
    res: dict[tuple[str, str], list[dict[str, float]]] = {(s, o): [] for s in sides for o in ops}
    for r in range(rounds):
        for op in ops:
            for s in ("base", "new") if r % 2 == 0 else ("new", "base"):
                proc = sides[s]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(f"{op} {n}\n")
                proc.stdin.flush()
                res[(s, op)].append(json.loads(proc.stdout.readline()))
    print(f"{rounds} rounds x {n} items, alternating; load {os.getloadavg()[0]:.1f}")
    for op in ops:
        cells = []
        for m in METRICS:
            b_rows, n_rows = res[("base", op)], res[("new", op)]
            ratio = statistics.median(y[m] / x[m] for x, y in zip(b_rows, n_rows, strict=True))
            b, v = (statistics.median(x[m] for x in side) * 1e3 for side in (b_rows, n_rows))
            cells.append(f"{m} {b:.2f} -> {v:.2f} ms (x{ratio:.3f})")
        print(f"{op:<8} " + " | ".join(cells))
    for proc in sides.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


def ab_main(script: str, ops: tuple[str, ...], serve: Callable[[str, int], None]) -> None:
    """The command line of a paired A/B script: ``--serve ROOT UID`` runs one side's server
    (``serve``); otherwise ``--base DIR [--rounds R] [--n N]`` drives both with ``paired``.
    Shared by this script and ``math_ab.py``."""
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other checkout (the baseline)")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--n", type=int, default=40, help="items per batch")
    a = ap.parse_args()
    paired(str(Path(script).resolve()), a.base, ops, a.rounds, a.n)


if __name__ == "__main__":
    ab_main(__file__, OPS, serve)
