"""Difficulty bands: which tasks a policy learns from, and why the others are retired.

GRPO learns only from groups whose rollouts disagree. A task the policy (almost) always
solves or always fails gives no signal, so calibration keeps the tasks whose estimated pass
rate lies inside a band (by default 2% to 70%) and retires the rest with a reason:

- ``zero_variance``: every rollout had the same outcome (all solved, or all failed), so the
  group's advantages are all zero whatever the band says;
- ``too_hard``: some successes, but a pass rate below the band;
- ``too_easy``: some failures, but a pass rate above the band;
- ``no_data``: no rollout finished (infrastructure errors);
- ``heldout``: a held-out task, which no training set may contain.

The call is made on the point estimate ``c / n``. Each row also carries its Wilson interval
and ``decisive``: whether that whole interval lies on the same side of the band as the call
(in-band rows: inside it), so a reader can see which calls more samples might change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gymforge.core.errors import UserError
from gymforge.evaluate.estimators import DEFAULT_CONFIDENCE, wilson_interval

REASONS = ("zero_variance", "too_hard", "too_easy", "no_data", "heldout")


@dataclass(frozen=True)
class Band:
    """The target pass-rate band ``[lo, hi]``, inclusive."""

    lo: float = 0.02
    hi: float = 0.70

    def __post_init__(self) -> None:
        if not 0.0 <= self.lo < self.hi <= 1.0:
            raise UserError(f"band must satisfy 0 <= lo < hi <= 1, got {self.lo},{self.hi}")

    @classmethod
    def parse(cls, text: str) -> Band:
        """``"0.02,0.70"`` (percentages like ``"2%,70%"`` work too)."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 2:
            raise UserError(f"--band takes LO,HI such as 0.02,0.70, not {text!r}")
        try:
            lo, hi = (float(p[:-1]) / 100 if p.endswith("%") else float(p) for p in parts)
        except ValueError:
            raise UserError(f"--band takes two numbers LO,HI, not {text!r}") from None
        return cls(lo, hi)

    def contains(self, rate: float) -> bool:
        return self.lo <= rate <= self.hi

    def as_list(self) -> list[float]:
        return [self.lo, self.hi]


def classify(c: int, n: int, band: Band) -> tuple[str, str | None, str]:
    """``(status, reason, detail)``: status ``in_band`` or ``retired``."""
    if n == 0:
        return "retired", "no_data", "no rollout finished (infrastructure errors)"
    if c == 0:
        return "retired", "zero_variance", f"all {n} rollouts failed (too hard: no signal)"
    if c == n:
        return "retired", "zero_variance", f"all {n} rollouts succeeded (too easy: no signal)"
    rate = c / n
    if rate < band.lo:
        return "retired", "too_hard", f"pass rate {rate:.3f} < band low {band.lo:g}"
    if rate > band.hi:
        return "retired", "too_easy", f"pass rate {rate:.3f} > band high {band.hi:g}"
    return "in_band", None, f"pass rate {rate:.3f} in [{band.lo:g}, {band.hi:g}]"


def calibration_row(
    base: dict[str, Any], c: int, n: int, band: Band, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """``base`` (task_id, family, ...) plus the estimate, interval, status and reason."""
    status, reason, detail = classify(c, n, band)
    lo, hi = wilson_interval(c, n, confidence)
    if status == "in_band":
        decisive = band.lo <= lo and hi <= band.hi
    elif reason == "too_hard" or (reason == "zero_variance" and c == 0):
        decisive = hi < band.lo
    elif reason in ("too_easy", "zero_variance"):
        decisive = lo > band.hi
    else:
        decisive = False
    return {
        **base,
        "n": n,
        "successes": c,
        "pass_rate": c / n if n else None,
        "lo": lo,
        "hi": hi,
        "status": status,
        "reason": reason,
        "detail": detail,
        "decisive": decisive,
    }


def no_band_reason(counts: dict[str, int], samples: int) -> str:
    """Why no task landed in the band, in one sentence, from the retirement counts."""
    if not any(counts.values()):
        return "no task was calibrated"
    if samples < 2:
        return f"with --samples {samples} every task is zero-variance; use --samples 8 or more"
    top = max(counts, key=lambda r: counts[r])
    hint = {
        "zero_variance": "every group agreed with itself: the policy is deterministic on "
        "these tasks or they sit far from its skill; try other difficulty levels",
        "too_hard": "the policy rarely solves these tasks: try lower difficulty levels",
        "too_easy": "the policy nearly always solves these tasks: try higher levels",
        "no_data": "rollouts failed on infrastructure errors",
        "heldout": "the task list held only held-out tasks",
    }[top]
    return f"most tasks retired as {top} ({counts[top]}): {hint}"
