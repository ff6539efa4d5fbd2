"""``MathVerifier``: a model response and a gold answer in, a ``Verdict`` out."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from gymforge.core.errors import VerifierError
from gymforge.verify.math.extract import MAX_ANSWER_CHARS, extract_answer, precheck
from gymforge.verify.math.pool import JobResult, MathPool, default_pool
from gymforge.verify.verdict import Verdict

VERSION = "1.0.0"
VERIFIER_ID = f"math@{VERSION}"
REASONS = frozenset(
    {
        "no_answer",  # no final answer outside the reasoning
        "hedged",  # several different final answers, or several values for one answer
        "not_equal",  # an answer, not equivalent to the gold
        "unit_mismatch",  # a unit that differs from the gold's, or a unit on a unitless gold
        "parse_error",  # the answer is not mathematics this verifier reads
        "too_large",  # beyond a size limit (length, digits, nesting, power, factorial)
        "timeout",  # evaluation overran the per-answer timeout; the worker was killed
        "worker_crash",  # the worker died twice on this answer (infrastructure or input)
    }
)
_FACT_CHARS = 200


@dataclass
class _Pending:
    facts: dict[str, Any]
    payload: dict[str, Any]
    timeout_s: float
    started: float
    prep_ms: float  # extraction and checks in the caller, before the job is queued


class MathVerifier:
    """Checks a response's final answer against a gold answer; hack-resistant by design.

    Extraction (``extract_answer``): the last ``\\boxed{}`` outside ``<think>`` reasoning, or
    with ``accept_answer_line`` a final ``Answer:`` line. Equivalence (``is_equivalent``):
    exact for rational golds, ``rel_tol`` (relative) for decimals against irrational golds,
    sympy and probe points for expressions, plus sets, intervals, tuples, matrices, equations
    and units. Evaluation runs in ``pool`` (default: the process-wide ``default_pool()``)
    under a hard ``timeout_s`` enforced by killing the worker.

    ``verify``/``averify`` return a ``Verdict`` whose ``facts`` hold ``extracted`` and
    ``gold`` (both cut to 200 characters), ``latency_ms`` (extraction plus dispatch to
    result; queueing for a free worker is excluded and reported as ``queue_ms``), ``source``,
    ``verifier`` and, on failure, ``reason`` (one of ``REASONS``) and sometimes ``detail``.
    Every call is computed afresh: nothing is cached across calls but parsed golds. Facts
    other than ``latency_ms`` and ``queue_ms`` are deterministic; ``Verdict.split_timing``
    separates the two for a step's ``timing``. Raises ``InfraError`` only if no worker can
    be started at all, ``ValueError`` for a gold over 10,000 characters.

    The verdict also reports, when they occur, ``other_answers`` (distinct other final
    answers, checked for hedging) and ``reasoning_boxes_ignored``.

    ``cache_gold=False`` clears the workers' parsed-gold cache before each job (to measure
    cold latency). ``on_crash="raise"`` raises ``VerifierError`` instead of returning a
    ``worker_crash`` verdict, for callers that leave verifier failures unscored.
    """

    def __init__(
        self,
        timeout_s: float = 1.0,
        rel_tol: float = 1e-9,
        accept_answer_line: bool = False,
        *,
        approx_gold: bool = False,
        pool: MathPool | None = None,
        on_crash: Literal["verdict", "raise"] = "verdict",
        cache_gold: bool = True,
    ) -> None:
        if timeout_s <= 0 or rel_tol < 0:
            raise ValueError("timeout_s must be > 0 and rel_tol >= 0")
        self.timeout_s = timeout_s
        self.rel_tol = rel_tol
        self.accept_answer_line = accept_answer_line
        self.approx_gold = approx_gold
        self._pool = pool
        self.on_crash = on_crash
        self.cache_gold = cache_gold

    @property
    def pool(self) -> MathPool:
        return self._pool if self._pool is not None else default_pool()

    def verify(
        self,
        response: str,
        gold: str,
        *,
        rel_tol: float | None = None,
        accept_answer_line: bool | None = None,
        approx_gold: bool | None = None,
        timeout_s: float | None = None,
    ) -> Verdict:
        """Judge ``response`` against ``gold``. Keyword options override the instance's for
        this call (per-task settings). Blocks the calling thread until the verdict."""
        p = self._prepare(response, gold, rel_tol, accept_answer_line, approx_gold, timeout_s)
        if isinstance(p, Verdict):
            return p
        return self._finish(p, self.pool.run(p.payload, p.timeout_s))

    async def averify(
        self,
        response: str,
        gold: str,
        *,
        rel_tol: float | None = None,
        accept_answer_line: bool | None = None,
        approx_gold: bool | None = None,
        timeout_s: float | None = None,
    ) -> Verdict:
        """``verify`` for asyncio: awaits the worker without blocking the event loop."""
        p = self._prepare(response, gold, rel_tol, accept_answer_line, approx_gold, timeout_s)
        if isinstance(p, Verdict):
            return p
        return self._finish(p, await self.pool.arun(p.payload, p.timeout_s))

    # ---- internals ----------------------------------------------------------------------
    def _prepare(
        self,
        response: str,
        gold: str,
        rel_tol: float | None,
        accept_answer_line: bool | None,
        approx_gold: bool | None,
        timeout_s: float | None,
    ) -> _Pending | Verdict:
        started = time.perf_counter()
        if not isinstance(response, str) or not isinstance(gold, str):
            raise TypeError("response and gold must be strings")
        line = self.accept_answer_line if accept_answer_line is None else accept_answer_line
        ex = extract_answer(response, accept_answer_line=line)
        facts: dict[str, Any] = {
            "extracted": None if ex.answer is None else ex.answer[:_FACT_CHARS],
            "gold": gold[:_FACT_CHARS],
            "source": ex.source,
            "verifier": VERIFIER_ID,
        }
        if ex.reasoning_boxes:
            facts["reasoning_boxes_ignored"] = ex.reasoning_boxes
        if ex.others:
            facts["other_answers"] = len(ex.others)
        if ex.answer is None or not ex.answer.strip():
            return _verdict(False, facts, started, "no_answer")
        if ex.too_many_answers:
            return _verdict(False, facts, started, "hedged", "too many different final answers")
        for text in (ex.answer, *ex.others):
            why = precheck(text)
            if why is not None:
                return _verdict(False, facts, started, "too_large", why)
        if len(gold) > MAX_ANSWER_CHARS:
            raise ValueError("gold answer too long")
        payload = {
            "op": "verify",
            "answers": [ex.answer, *ex.others],
            "gold": gold,
            "rel_tol": self.rel_tol if rel_tol is None else rel_tol,
            "approx_gold": self.approx_gold if approx_gold is None else approx_gold,
            "cache_gold": self.cache_gold,
        }
        timeout = self.timeout_s if timeout_s is None else timeout_s
        return _Pending(facts, payload, timeout, started, (time.perf_counter() - started) * 1e3)

    def _finish(self, p: _Pending, r: JobResult) -> Verdict:
        prep_ms = p.prep_ms
        p.facts["queue_ms"] = round(r.queue_ms, 3)
        if r.status == "timeout":
            return _verdict(False, p.facts, p.started, "timeout", None, r.latency_ms + prep_ms)
        if r.status == "crash" or r.value is None or "equal" not in r.value:
            if self.on_crash == "raise":
                raise VerifierError("math verifier worker crashed")
            return _verdict(False, p.facts, p.started, "worker_crash", None, r.latency_ms + prep_ms)
        v = r.value
        reason = None if v["equal"] else (v.get("reason") or "not_equal")
        return _verdict(bool(v["equal"]), p.facts, p.started, reason, v.get("detail"),
                        r.latency_ms + prep_ms)  # fmt: skip


def _verdict(
    passed: bool,
    facts: dict[str, Any],
    started: float,
    reason: str | None,
    detail: str | None = None,
    latency_ms: float | None = None,
) -> Verdict:
    if latency_ms is None:
        latency_ms = (time.perf_counter() - started) * 1e3
    facts["latency_ms"] = round(latency_ms, 3)
    if reason is not None:
        assert reason in REASONS, reason
        facts["reason"] = reason
    if detail:
        facts["detail"] = str(detail)[:_FACT_CHARS]
    return Verdict(passed=passed, reason=reason, facts=facts, verifier=VERIFIER_ID)
