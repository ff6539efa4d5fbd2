"""The sales pipeline as data: its stages, the transitions the written policy allows, and
the fields an opportunity must have filled to sit in each stage. Pure functions: the tools
report with them, the scenarios plan with them, the verifier judges with them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STAGES = ("prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost")
OPEN = STAGES[:4]
REQUIRED: dict[str, tuple[str, ...]] = {
    "prospecting": (),
    "qualification": ("contact_id",),
    "proposal": ("contact_id", "amount_cents"),
    "negotiation": ("contact_id", "amount_cents", "close_date"),
    "closed_won": ("contact_id", "amount_cents", "close_date"),
    "closed_lost": ("loss_reason",),
}
LOSS_REASONS = ("price", "competitor", "no_budget", "no_decision", "timing")


def allowed(src: str, dst: str) -> bool:
    """One step forward, one step back, ``closed_won`` only from ``negotiation``, and
    ``closed_lost`` from any open stage. Closed stages are final."""
    if src not in OPEN or dst not in STAGES or src == dst:
        return False
    i, j = STAGES.index(src), STAGES.index(dst)
    if dst == "closed_lost":
        return True
    if dst == "closed_won":
        return src == "negotiation"
    return abs(i - j) == 1


def missing(row: Mapping[str, Any], stage: str) -> list[str]:
    """The fields ``stage`` requires that ``row`` leaves empty."""
    return [f for f in REQUIRED[stage] if row.get(f) in (None, "", 0)]


def path(src: str, dst: str) -> list[str]:
    """The stages an allowed walk from ``src`` passes through to reach ``dst`` (``dst``
    last): open stages one at a time, then the close."""
    if dst == "closed_lost":
        return [dst]
    target = "negotiation" if dst == "closed_won" else dst
    i, j = STAGES.index(src), STAGES.index(target)
    step = 1 if j >= i else -1
    out = [STAGES[k] for k in range(i + step, j + step, step)] if i != j else []
    return [*out, "closed_won"] if dst == "closed_won" else out


def describe() -> dict[str, Any]:
    """The pipeline as ``get_pipeline`` shows it."""
    return {
        "stages": list(STAGES),
        "transitions": {s: [d for d in STAGES if allowed(s, d)] for s in STAGES},
        "required_fields": {s: list(f) for s, f in REQUIRED.items()},
        "loss_reasons": list(LOSS_REASONS),
    }
