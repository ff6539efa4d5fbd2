"""What the cross-process QA parts cost: ``run_qa`` with and without the fresh process.

Claim: replaying episodes and building the reset-isolation references in a fresh process
(another ``PYTHONHASHSEED``, the wall clock shifted by 40 days through libfaketime) adds at
most ``LIMIT_S`` (1 s) of wall-clock time to a whole QA run, whatever the environment: one
child start-up (an interpreter importing gymforge and the environment, plus whatever
worker pools the environment starts, such as the math verifier's sympy zygote) and a few
episodes. The ratio is printed too; it is large for environments whose whole QA run takes
a fraction of a second in a warm process (a ``gymforge qa`` command also pays this
process's own start-up, which this in-process measurement leaves out).

Method, per environment, in one process: ``run_qa`` on the same target alternately with
the fresh process (the default) and without it (``import_ref = None``: the checks then say
they could not build the factory elsewhere and do everything in-process), ``PASSES`` times
each after one warm-up run of each; the fastest pass of each mode is compared (the machine
may be shared; the fastest pass is the least disturbed one). Wall-clock time is what a user
waits for; the child's start-up overlaps the in-process checks.

Run: python benchmarks/qa_fresh_process.py [ENV ...]   (default: ledger digits puzzles math)
"""

from __future__ import annotations

import sys
import time

from gymforge.qa import QATarget, run_qa

PASSES = 3
LIMIT_S = 1.0


def one(env_id: str, fresh: bool) -> float:
    target = QATarget.load(env_id)
    if not fresh:
        target.import_ref = None
    t0 = time.perf_counter()
    report = run_qa(target)
    seconds = time.perf_counter() - t0
    if not report.passed:
        failed = [f"{c.name}: {c.details}" for c in report.checks if not c.passed]
        raise SystemExit(f"{env_id}: QA failed: {failed}")
    return seconds


def main(envs: list[str]) -> int:
    worst = 0.0
    print(f"{'env':<14} {'in-process s':>12} {'fresh s':>9} {'added s':>8} {'ratio':>6}")
    for env_id in envs:
        one(env_id, True), one(env_id, False)  # warm-up: imports, templates, pools
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(PASSES):
            for fresh in (False, True):
                times[fresh].append(one(env_id, fresh))
        base, new = min(times[False]), min(times[True])
        worst = max(worst, new - base)
        print(f"{env_id:<14} {base:>12.2f} {new:>9.2f} {new - base:>8.2f} {new / base:>6.2f}")
    print(f"most added: {worst:.2f} s (claim: <= {LIMIT_S} s)")
    return 0 if worst <= LIMIT_S else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["ledger", "digits", "puzzles", "math"]))
