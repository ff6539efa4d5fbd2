"""Composition of verifiers: ``AllOf``, ``AnyOf`` and ``Weighted``, keeping every part's facts.

A *part* is any callable that returns a ``Verdict`` (or an awaitable of one) when called
with the composite's arguments; give each a name::

    check = AllOf(
        schema=lambda reply: schema_verifier.verify(reply, gold),
        sql=lambda reply: sql_verifier.verify(reply, gold_sql, fixtures),
    )
    verdict = check(reply)            # or: await check.averify(reply)

Each part's credit is its ``score``, or 1/0 from ``passed`` when it has none.

- ``AllOf``: passes when every part passes; ``score`` is the lowest credit (fuzzy AND).
  ``reason`` is ``"<part>:<its reason>"`` of the first failing part.
- ``AnyOf``: passes when some part passes; ``score`` is the highest credit (fuzzy OR).
- ``Weighted``: ``score`` is the weighted mean of the credits; passes when the score
  reaches ``pass_at`` (default 1.0: every weighted part fully right).

``facts["parts"]`` maps each part's name to its whole verdict (``passed``, ``score``,
``reason``, ``facts``, ``verifier``), so nothing a part found is lost. Wall-clock facts
(``latency_ms``, ``queue_ms``; see ``Verdict.split_timing``) are lifted out of the parts and
summed into the composite's own facts, so ``split_timing`` on the composite still keeps a
step's ``info`` deterministic. With ``short_circuit``, ``AllOf`` stops at the first failure
and ``AnyOf`` at the first pass; parts not run are listed in ``facts["skipped"]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from gymforge.core.verdict import Verdict

Part = Callable[..., Verdict | Awaitable[Verdict]]


def credit(verdict: Verdict) -> float:
    """A part's credit in [0, 1]: its score, else 1.0 for a pass and 0.0 for a fail."""
    return verdict.score if verdict.score is not None else float(verdict.passed)


class _Composite:
    kind = "composite"

    def __init__(self, parts: Mapping[str, Part], short_circuit: bool = False) -> None:
        if not parts:
            raise ValueError(f"{type(self).__name__} needs at least one part")
        self.parts = dict(parts)
        self.short_circuit = short_circuit

    # ---- running ------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Verdict:
        return self.verify(*args, **kwargs)

    def verify(self, *args: Any, **kwargs: Any) -> Verdict:
        """Run the parts in order (synchronous parts only; use ``averify`` otherwise)."""
        done: dict[str, Verdict] = {}
        for name, part in self.parts.items():
            result = part(*args, **kwargs)
            if inspect.isawaitable(result):
                _close(result)
                raise TypeError(f"part {name!r} is async; call averify instead")
            done[name] = _check(name, result)
            if self._stop(done[name]):
                break
        return self.combine(done)

    async def averify(self, *args: Any, **kwargs: Any) -> Verdict:
        """Run the parts in order, awaiting async ones."""
        done: dict[str, Verdict] = {}
        for name, part in self.parts.items():
            result = part(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            done[name] = _check(name, result)
            if self._stop(done[name]):
                break
        return self.combine(done)

    # ---- combining ----------------------------------------------------------------------
    def _stop(self, verdict: Verdict) -> bool:
        return False

    def decide(self, verdicts: Mapping[str, Verdict]) -> tuple[bool, float, str | None]:
        raise NotImplementedError

    def combine(self, verdicts: Mapping[str, Verdict]) -> Verdict:
        """The composite verdict over the parts that ran."""
        passed, score, reason = self.decide(verdicts)
        timing: dict[str, float] = {}
        parts: dict[str, Any] = {}
        for name, v in verdicts.items():
            clean, t = v.split_timing()
            for key, value in t.items():
                timing[key] = timing.get(key, 0.0) + value
            parts[name] = clean.model_dump(mode="json")
        facts: dict[str, Any] = {"reason": reason, "parts": parts}
        skipped = [n for n in self.parts if n not in verdicts]
        if skipped:
            facts["skipped"] = skipped
        facts.update(timing)
        label = ",".join(f"{n}={v.verifier}" for n, v in verdicts.items())
        return Verdict(
            passed=passed,
            score=round(min(1.0, max(0.0, score)), 6),
            reason=reason,
            facts=facts,
            verifier=f"{self.kind}({label})",
        )


class AllOf(_Composite):
    """Every part must pass. See the module docstring."""

    kind = "all_of"

    def __init__(
        self, parts: Mapping[str, Part] | None = None, *, short_circuit: bool = False, **named: Part
    ) -> None:
        super().__init__({**(parts or {}), **named}, short_circuit)

    def _stop(self, verdict: Verdict) -> bool:
        return self.short_circuit and not verdict.passed

    def decide(self, verdicts: Mapping[str, Verdict]) -> tuple[bool, float, str | None]:
        failing = next((n for n, v in verdicts.items() if not v.passed), None)
        passed = failing is None and len(verdicts) == len(self.parts)
        score = min(credit(v) for v in verdicts.values())
        reason = None if failing is None else f"{failing}:{verdicts[failing].reason or 'failed'}"
        return passed, score, reason


class AnyOf(_Composite):
    """Some part must pass. See the module docstring."""

    kind = "any_of"

    def __init__(
        self, parts: Mapping[str, Part] | None = None, *, short_circuit: bool = False, **named: Part
    ) -> None:
        super().__init__({**(parts or {}), **named}, short_circuit)

    def _stop(self, verdict: Verdict) -> bool:
        return self.short_circuit and verdict.passed

    def decide(self, verdicts: Mapping[str, Verdict]) -> tuple[bool, float, str | None]:
        passed = any(v.passed for v in verdicts.values())
        score = max(credit(v) for v in verdicts.values())
        return passed, score, None if passed else "none_passed"


class Weighted(_Composite):
    """Weighted mean of the parts' credits; passes at ``pass_at``. ``parts`` maps each name
    to ``(part, weight)``; weights must be positive."""

    kind = "weighted"

    def __init__(self, parts: Mapping[str, tuple[Part, float]], *, pass_at: float = 1.0) -> None:
        if any(w <= 0 for _, w in parts.values()):
            raise ValueError("Weighted needs positive weights")
        if not 0.0 < pass_at <= 1.0:
            raise ValueError("pass_at must be in (0, 1]")
        super().__init__({n: p for n, (p, _) in parts.items()})
        self.weights = {n: float(w) for n, (_, w) in parts.items()}
        self.pass_at = pass_at

    def decide(self, verdicts: Mapping[str, Verdict]) -> tuple[bool, float, str | None]:
        total = sum(self.weights.values())
        score = sum(self.weights[n] * credit(v) for n, v in verdicts.items()) / total
        passed = score >= self.pass_at - 1e-9
        return passed, score, None if passed else "below_pass_mark"

    def combine(self, verdicts: Mapping[str, Verdict]) -> Verdict:
        verdict = super().combine(verdicts)
        facts = {**verdict.facts, "weights": dict(self.weights), "pass_at": self.pass_at}
        return verdict.model_copy(update={"facts": facts})


def _check(name: str, result: Any) -> Verdict:
    if not isinstance(result, Verdict):
        raise TypeError(f"part {name!r} returned {type(result).__name__}, not a Verdict")
    return result


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
