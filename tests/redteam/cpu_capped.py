"""Run a snippet of Python in a fresh interpreter of this checkout under a CPU-time limit:
how the corpus shows an answer costing more than linear time without asserting a wall-clock
figure (the child is killed by ``SIGXCPU`` past the limit, whatever the machine's load)."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[2]


def run_capped(code: str, cpu_limit_s: int) -> subprocess.CompletedProcess[str]:
    """``code`` (dedented) run with ``RLIMIT_CPU`` at ``cpu_limit_s`` seconds."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit_s, cpu_limit_s + 1))

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=600,
    )
