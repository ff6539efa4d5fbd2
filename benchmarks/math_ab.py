"""Paired A/B of the math verifier's worker pool between this checkout and another (e.g. a
worktree of the parent commit), in the same run: does a change slow the pool down?

Each side is a long-lived process of its own checkout with a warmed two-worker ``MathPool``;
the driver (``sandbox_ab.paired``) alternates short batches of each workload between the sides,
order flipped every round, so both see the same machine load, and prints per workload the
medians and the **paired median ratio new/base** of p50 latency, CPU per item (this process
plus the pool's zygote and workers) and wall per item. Workloads:

- ``ping``: one job round trip through the pool and back (the plumbing alone);
- ``verify``: ``MathVerifier(cache_gold=False).verify`` on the labelled answer forms of
  ``tests/verify/data/math_answers.jsonl`` in turn (extraction, round trip, sympy), each
  checked against the verdict its side gave while warming up.

    git worktree add /tmp/base HEAD~1
    .venv/bin/python benchmarks/math_ab.py --base /tmp/base [--rounds 12] [--n 40]
"""

from __future__ import annotations

import itertools
import sys

from proc_cpu import process_cpu_s
from sandbox_ab import ab_main, answer

OPS = ("ping", "verify")


def _cpu_s(pid: int) -> float:
    try:
        return process_cpu_s(pid)
    except OSError:  # a worker replaced since: its time is lost to both sides alike
        return 0.0


def serve(root: str, _uid_base: int) -> None:
    """One side: answer ``OP N`` lines (see ``sandbox_ab.answer``)."""
    sys.path[:0] = [root, f"{root}/tests/verify"]
    from math_cases import load_cases

    from gymforge.verify.math import MathPool, MathVerifier

    pool = MathPool(workers=2).start()
    ver = MathVerifier(pool=pool, cache_gold=False)
    cases = load_cases()
    expected = [ver.verify(c.response, c.gold, strict=c.strict, form=c.form).passed for c in cases]
    turn = itertools.cycle(range(len(cases)))

    def verify() -> bool:
        i = next(turn)
        c = cases[i]
        return ver.verify(c.response, c.gold, strict=c.strict, form=c.form).passed == expected[i]

    def ping() -> bool:
        return pool.run({"op": "ping"}).status == "ok"

    def pool_cpu() -> float:
        p = pool.pids()
        return sum(_cpu_s(pid) for pid in [p["zygote"], *p["workers"]])

    answer({"ping": ping, "verify": verify}, pool_cpu)
    pool.shutdown()


if __name__ == "__main__":
    ab_main(__file__, OPS, serve)
