"""Verdicts: what a verifier found. Facts only; turning them into reward is not its job."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Verdict(BaseModel):
    """``passed`` plus the facts behind it.

    ``score`` is optional partial credit in [0, 1] (fraction of tests or fields right);
    ``reason`` is a short machine-readable failure reason (``wrong_answer``, ``no_change``...);
    ``verifier`` names the verifier and its version, so verdicts stay comparable over time.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    reason: str | None = None
    facts: dict[str, Any] = Field(default_factory=dict)
    verifier: str = "unknown"

    def split_timing(self) -> tuple[Verdict, dict[str, float]]:
        """(this verdict without its wall-clock facts, those facts). Some verifiers report
        timings among their facts (the math verifier's ``latency_ms``); a step's ``info``
        must stay deterministic, so they belong in ``StepResult.timing`` instead."""
        timing = {k: float(v) for k, v in self.facts.items() if k in TIMING_FACTS}
        if not timing:
            return self, {}
        facts = {k: v for k, v in self.facts.items() if k not in TIMING_FACTS}
        return self.model_copy(update={"facts": facts}), timing


TIMING_FACTS = frozenset({"latency_ms", "queue_ms", "slowest_call_ms", "call_limit_ms"})
"""Fact keys that hold wall-clock measurements rather than facts about the answer."""
