"""Task generation rate of the ``puzzles`` families, per family and difficulty level.

Claim: every family generates at least 1,000 tasks/s per level through the public path
``TaskFamily.task(difficulty, seed)`` (params drawn from a stable hash, the puzzle built,
the ``Task`` model validated). Nothing is cached between seeds.

Method: for each (family, level), call ``task(level, seed)`` for consecutive seeds for
about ``SECONDS`` of wall time and report tasks/s. The in-run baseline is a trivial family
whose ``build`` only draws three random numbers: it measures the fixed cost of the id,
seeding and ``Task`` machinery on this machine, which bounds every family from above.
Also reported: the share of duplicate prompts among the first ``DUP_SAMPLE`` tasks of each
cell (seeds 0..999, the size of a small training set), and for knights and knaves the share
of tasks with exactly one consistent assignment.

Run: .venv/bin/python benchmarks/task_generation_puzzles.py [seconds-per-cell]
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from gymforge.envs.puzzles import FAMILIES
from gymforge.tasks import AnswerTruth, IntKnob, ParamSpace, TaskFamily

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
TARGET = 1_000.0
DUP_SAMPLE = 1_000


class TrivialFamily(TaskFamily[AnswerTruth]):
    """The baseline: draws three numbers, nothing else."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        a, b, c = r.randint(0, 99), r.randint(0, 99), r.randint(0, 99)
        return f"{a} {b} {c}", AnswerTruth(answer=str(a + b + c))


BASELINE = TrivialFamily("baseline.trivial", 1, {1: ParamSpace({"n": IntKnob(1, 9)})})


def measure(family: TaskFamily[Any], level: int) -> tuple[float, int, float, float | None]:
    """(tasks/s, tasks made, duplicate share, unique-solution share or None)."""
    prompts: set[str] = set()
    unique = made = 0
    t0 = time.perf_counter()
    deadline = t0 + SECONDS
    while time.perf_counter() < deadline or made < DUP_SAMPLE:
        for _ in range(50):
            task = family.task(level, made)
            made += 1
            if made <= DUP_SAMPLE:
                prompts.add(task.prompt)
            unique += task.truth.get("solutions") == 1
    rate = made / (time.perf_counter() - t0)
    share = unique / made if family.name.endswith("knights_knaves") else None
    return rate, made, 1 - len(prompts) / DUP_SAMPLE, share


def main() -> None:
    print(f"{'family':<26}{'level':>6}{'tasks/s':>12}{'tasks':>9}{'dup':>8}  note")
    rows = [(BASELINE, 1)] + [(f, d) for f in FAMILIES for d in sorted(f.levels)]
    slow = []
    for family, level in rows:
        rate, made, dup, unique = measure(family, level)
        note = "" if unique is None else f"unique solution {unique:.1%}"
        if family is not BASELINE and rate < TARGET:
            slow.append(f"{family.name} d{level}")
            note = (note + "  BELOW TARGET").strip()
        print(f"{family.name:<26}{level:>6}{rate:>12,.0f}{made:>9}{dup:>8.2%}  {note}")
    print(f"target: >= {TARGET:,.0f} tasks/s per family and level; ", end="")
    print("all met" if not slow else f"below target: {', '.join(slow)}")


if __name__ == "__main__":
    main()
