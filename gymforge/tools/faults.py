"""Seeded fault injection for tools: ``FaultPlan`` and the fault kinds.

They are defined in ``gymforge.core.faults``, because the toolset capability of
``gymforge.core.capabilities`` (``set_fault_plan``) takes a plan; this is their public path.
"""

from __future__ import annotations

from gymforge.core.faults import FAULT_KINDS, NO_FAULTS, FaultKind, FaultPlan

__all__ = ["FAULT_KINDS", "NO_FAULTS", "FaultKind", "FaultPlan"]
