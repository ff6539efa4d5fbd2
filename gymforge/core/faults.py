"""Seeded fault injection for tools (public path: ``gymforge.tools.faults``).

A ``FaultPlan`` decides, for each tool call, whether a fault fires. The decision is a pure
function of ``(task_id, seed, tool, call_index)`` through a stable hash, so replaying the same
actions replays the same faults exactly, and faults in one tool never shift another's.

Fault kinds:
- ``timeout``: the call fails with a retryable ``timeout`` error; a write is not applied.
- ``permission_denied``: the call fails with a non-retryable ``permission_denied`` error.
- ``empty``: a read tool "succeeds" with an empty result (``[]``, ``{}``, ``""`` or
  ``null``). On a write tool the fault does not fire.
- ``stale``: a read tool serves the result of an earlier call with the same arguments,
  marked ``stale`` with ``as_of_call``. Without an earlier call the fault does not fire.

The plan is part of the toolset contract (``ToolsetView.set_fault_plan`` takes one), so it
lives in ``core``; ``gymforge.tools`` applies it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from gymforge.core.seeding import uniform

FaultKind = Literal["timeout", "permission_denied", "empty", "stale"]
FAULT_KINDS: tuple[FaultKind, ...] = ("timeout", "permission_denied", "empty", "stale")


@dataclass(frozen=True)
class FaultPlan:
    """Per-call fault probabilities, optionally limited to some tools, plus forced faults.

    ``forced`` entries ``(tool, call_index, kind)`` always fire (call indices count from 0
    per tool per episode); they make a scripted fault scenario exact.
    """

    rates: dict[FaultKind, float] = field(default_factory=dict)
    tools: frozenset[str] | None = None
    forced: tuple[tuple[str, int, FaultKind], ...] = ()

    def __post_init__(self) -> None:
        rates = list(self.rates.values())
        if not all(math.isfinite(r) and r >= 0 for r in rates) or math.fsum(rates) > 1.0:
            raise ValueError("fault rates must be finite, >= 0 and sum to at most 1")
        unknown = set(self.rates) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")

    def decide(self, task_id: str, seed: int, tool: str, call_index: int) -> FaultKind | None:
        for f_tool, f_index, f_kind in self.forced:
            if f_tool == tool and f_index == call_index:
                return f_kind
        if not self.rates or (self.tools is not None and tool not in self.tools):
            return None
        u = uniform("fault", task_id, seed, tool, call_index)
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += self.rates.get(kind, 0.0)
            if u < edge:
                return kind
        return None


NO_FAULTS = FaultPlan()
