"""Verdicts: what a verifier found. Facts only; turning them into reward is not its job."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gymforge.core.built import built, str_keyed


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
        must stay deterministic, so they belong in ``StepResult.timing`` instead.

        The copy is ``model_copy(update={"facts": ...})``; for a ``Verdict`` itself (no
        extras, no private values) it is made here, as that does it: the same ``__dict__``
        with the new facts in their place, and the fields set plus ``facts``
        (tests/verify/test_verdict_fast_paths.py holds the two equal)."""
        facts = self.facts
        found = facts.keys() & TIMING_FACTS
        if not found:
            return self, {}
        kept = dict(facts)
        if len(found) == 1:  # one timing fact (the usual): no walk over the facts
            (name,) = found
            timing = {name: float(kept.pop(name))}
        else:
            timing = {k: float(v) for k, v in facts.items() if k in found}
            for k in timing:
                del kept[k]
        if (
            type(self) is not Verdict
            or self.__pydantic_extra__ is not None
            or self.__pydantic_private__ is not None
        ):
            return self.model_copy(update={"facts": kept}), timing
        fields = {**self.__dict__, "facts": kept}
        return built(Verdict, fields, {*self.__pydantic_fields_set__, "facts"}), timing


def verdict_of(passed: bool, reason: str | None, facts: dict[str, Any], verifier: str) -> Verdict:
    """``Verdict(passed=passed, reason=reason, facts=facts, verifier=verifier)``. Given values
    of exactly their declared types (``facts`` a ``dict`` keyed by ``str`` only), which
    validation keeps as they are, it is built here as validation builds it: the fields in
    their order, ``score`` its default, ``facts`` a copy, those four fields set. Any other
    values are validated by the constructor (tests/verify/test_verdict_fast_paths.py)."""
    if (
        type(passed) is bool
        and (reason is None or type(reason) is str)
        and type(verifier) is str
        and str_keyed(facts)
    ):
        fields = {"passed": passed, "score": None, "reason": reason, "facts": dict(facts)}
        fields["verifier"] = verifier
        return built(Verdict, fields, {"passed", "reason", "facts", "verifier"})
    return Verdict(passed=passed, reason=reason, facts=facts, verifier=verifier)


TIMING_FACTS = frozenset({"latency_ms", "queue_ms", "slowest_call_ms", "call_limit_ms"})
"""Fact keys that hold wall-clock measurements rather than facts about the answer."""
