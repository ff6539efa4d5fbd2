"""How fast this machine is right now, measured in the same process as the throughput check.

A throughput budget is a statement about the environment, not about whatever else the machine
is doing. On a loaded machine (CI, a shared dev box, a laptop on battery) every figure drops,
so an absolute steps-per-second budget fails environments that are fine. The throughput check
therefore runs a fixed reference workload right before and right after each measurement and
judges the environment's figures scaled by how much slower the reference ran than on an idle
reference machine (``REFERENCE_SECONDS``). The scale only ever relaxes a budget (a fast machine
never tightens it) and is capped at ``MAX_SLOWDOWN``, so a machine too slow to say anything
still fails loudly instead of excusing any environment.

The workload is plain CPython work of the kind a tool environment step does: building dicts,
canonical JSON, SHA-256. It is deterministic: the same bytes every call.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

# Seconds ``reference_workload()`` takes on an idle 2-core machine of the kind the built-in
# budgets were set on (the minimum over many runs).
REFERENCE_SECONDS = 0.0031
MAX_SLOWDOWN = 20.0
ROUNDS = 4


def reference_workload() -> str:
    """A fixed amount of step-like work; returns a digest so nothing is optimised away."""
    digest = hashlib.sha256()
    for i in range(300):
        record = {
            "step": i,
            "task_id": f"reference/v1/d{i % 5}/s{i * 7919}",
            "rows": [{"id": j, "amount": j * 3 + i, "note": "x" * (j % 7)} for j in range(12)],
            "flags": {"terminated": i % 11 == 0, "truncated": False},
        }
        digest.update(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()


def measure_workload(rounds: int = ROUNDS) -> float:
    """Mean seconds per workload over ``rounds`` back-to-back runs (the mean, not the minimum:
    it must feel the same contention the measurement it brackets feels)."""
    t0 = time.perf_counter()
    for _ in range(rounds):
        reference_workload()
    return (time.perf_counter() - t0) / rounds


@dataclass(frozen=True)
class Slowdown:
    """How much slower than the reference machine the workload ran around one measurement."""

    before_s: float
    after_s: float

    @property
    def factor(self) -> float:
        mean = (self.before_s + self.after_s) / 2
        return min(MAX_SLOWDOWN, max(1.0, mean / REFERENCE_SECONDS))
