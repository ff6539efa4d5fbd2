"""Claim: ``import gymforge`` stays cheap although the package exports its curated API
(``Environment``, ``ToolEnv``, ``tool``, ``Verdict``, ``TaskFamily``, ``make``, ``run``): the
names are imported on first use.

Each sample is a fresh interpreter run with ``-X importtime``; the figure is the cumulative
import time of the top-level ``gymforge`` module, against the same interpreter importing the
whole exported API (the cost an eager ``__init__`` would put on every ``import gymforge``).
Runs alternate between the two, so machine load hits both alike; medians are reported.

    python benchmarks/import_cost.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAZY = "import gymforge"
EAGER = "import gymforge; [getattr(gymforge, n) for n in gymforge.__all__]"
LINE = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S+)$", re.M)  # top-level entries only


def import_us(code: str) -> tuple[int, int]:
    """Microseconds of ``import gymforge`` itself, and of every gymforge import ``code`` made
    (what the first use of each name imported lands in top-level ``gymforge.*`` entries)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=300,
    )
    top, total = 0, 0
    for m in LINE.finditer(proc.stderr):
        cumulative, name = int(m.group(1)), m.group(2)
        if name == "gymforge":
            top = cumulative
        if name == "gymforge" or name.startswith("gymforge."):
            total += cumulative
    return top, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    lazy, eager = [], []
    for _ in range(args.runs):
        lazy.append(import_us(LAZY)[0])
        eager.append(import_us(EAGER)[1])
    lazy_ms, eager_ms = statistics.median(lazy) / 1000, statistics.median(eager) / 1000
    print(f"import gymforge:              median {lazy_ms:8.2f} ms  ({args.runs} runs)")
    print(f"import the whole API eagerly: median {eager_ms:8.2f} ms")
    print(f"lazy / eager: {lazy_ms / eager_ms:.3f}")


if __name__ == "__main__":
    main()
