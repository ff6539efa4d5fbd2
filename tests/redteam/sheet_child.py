"""Run a spreadsheet attack in a child process under an address-space limit, so a formula
that blows up costs the child, never the test machine; the child prints one JSON line."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELPERS = ROOT / "tests" / "envs" / "spreadsheet"
MEMORY = 1_500_000_000
"""The child's address-space limit in bytes (the engine's own use is far below it)."""

PRELUDE = f"""
import json, resource, sys
sys.path.insert(0, {str(HELPERS)!r})
from spreadsheet_helpers import Driver, task_id

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_child(body: str, safety_timeout: float = 120.0) -> dict[str, Any]:
    """Run ``body`` (after the prelude) in a child; its last stdout line, as JSON. The
    timeout only keeps a hung child from hanging the suite: it is no assertion on time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limit,
        timeout=safety_timeout,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, (
        f"child failed ({proc.returncode}): {proc.stderr[-2000:]}"
    )
    out: dict[str, Any] = json.loads(lines[-1])
    return out
