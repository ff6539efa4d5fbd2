"""``MathVerifier``: a model response and a gold answer in, a ``Verdict`` out."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from gymforge.core.errors import VerifierError
from gymforge.core.verdict import Verdict, verdict_of
from gymforge.verify.math.extract import (
    MAX_ANSWER_CHARS,
    ExtractionResult,
    extract_answer,
    precheck,
)
from gymforge.verify.math.form import FORMS
from gymforge.verify.math.pool import JobResult, MathPool
from gymforge.verify.math.text import BLANK_GOLD, blank_gold
from gymforge.verify.services import current

VERSION = "1.3.0"
VERIFIER_ID = f"math@{VERSION}"
REASONS = frozenset(
    {
        "no_answer",  # no final answer outside the reasoning
        "hedged",  # several values in the answer, or (strict) different final answers
        "not_equal",  # an answer, not equivalent to the gold
        "unevaluated",  # a number is asked (integer, reduced fraction); a computation given
        "unit_mismatch",  # a unit unlike the gold's, a unit on a unitless gold, scale words
        "parse_error",  # the answer is not mathematics this verifier reads
        "too_large",  # beyond a size limit (length, digits, nesting, power, factorial)
        "timeout",  # evaluation overran the per-answer timeout; the worker was killed
        "worker_crash",  # the worker died twice on this answer (infrastructure or input)
        "over_budget",  # the response overran the environment's token budget; not read
    }
)
DecidedBy = Literal["single_answer", "last_answer", "strict"]
_FACT_CHARS = 200


class _Call(NamedTuple):
    """The settings of one ``verify`` call (the instance's, overridden per call)."""

    rel_tol: float
    accept_answer_line: bool
    approx_gold: bool
    timeout_s: float
    strict: bool
    form: str | None
    number: bool = False
    """The task asks for a number though it declares no form (families before forms):
    ``unevaluated`` as for a number form, with no form facts."""


_OPTIONS = frozenset(_Call._fields)


@dataclass
class _Pending:
    facts: dict[str, Any]
    payload: dict[str, Any]
    call: _Call
    started: float
    prep_ms: float  # extraction and checks in the caller, before the job is queued


def default_pool() -> MathPool:
    """The math pool of the run this code runs in (``gymforge.verify.services``; outside any
    run, the library default's)."""
    return current().math_pool()


class MathVerifier:
    """Checks a response's final answer against a gold answer; hack-resistant by design.

    **Extraction** (``extract_answer``): the final answer is the last ``\\boxed{}`` outside
    ``<think>`` reasoning (or, with ``accept_answer_line``, the last ``Answer:`` line when
    there is no box). Earlier final answers are a draft the response corrected: by default
    they are ignored, so ``\\boxed{240} wait, no: \\boxed{239}`` answers 239. With
    ``strict=True`` every distinct final answer must be equivalent to the last one, so a
    visible self-correction or a hedge across boxes fails as ``hedged``. Several values
    inside the one graded answer (``3 \\text{ or } 5``, ``\\pm 3`` for 3) are a hedge in both
    modes. The fact ``decided_by`` says which rule decided: ``single_answer`` (one distinct
    final answer), ``last_answer`` (several; the last was graded, the others ignored) or
    ``strict`` (several, all checked).

    **Equivalence** (``is_equivalent``): exact for rational golds, ``rel_tol`` (relative) for
    decimals against irrational golds, sympy and probe points for expressions, plus sets,
    intervals, tuples, matrices, equations and units. Evaluation runs in ``pool`` (default:
    the current run's ``default_pool()``) under a hard ``timeout_s`` enforced by killing the
    worker.

    **Form** (``form``, one of ``FORMS``: ``integer``, ``reduced_fraction``,
    ``simplest_radical``): when a task demands a form, the verdict also reports ``form``
    and ``form_ok`` (with ``form_detail`` when it fails). ``passed`` stays a statement about
    the value: ``\\frac{2}{4}`` for a reduced-fraction task passes with ``form_ok: false``.
    A task that asks for a number (``integer``, ``reduced_fraction``) needs one written out
    (``form.written_number``): a computation of the gold's value (``1 + 2``, the question's
    own expression copied) fails as ``unevaluated``, the verifier never doing the task's
    arithmetic; an equation chain whose last side is the number written out reads as it
    (``3 \\cdot 4 = 12``), as does a residue with its modulus (``residue.residue_of``).

    ``verify``/``averify`` return a ``Verdict`` whose ``facts`` hold ``extracted`` and
    ``gold`` (both cut to 200 characters), ``latency_ms`` (extraction plus dispatch to
    result; queueing for a free worker is excluded and reported as ``queue_ms``), ``source``,
    ``decided_by``, ``verifier`` and, on failure, ``reason`` (one of ``REASONS``) and
    sometimes ``detail``; also, when they occur, ``other_answers`` (how many distinct other
    final answers there were) and ``reasoning_boxes_ignored``. Every call is computed afresh:
    nothing is cached across calls but parsed golds. Facts other than ``latency_ms`` and
    ``queue_ms`` are deterministic; ``Verdict.split_timing`` separates the two for a step's
    ``timing``. Raises ``InfraError`` only if no worker can be started at all, ``ValueError``
    for a gold over 10,000 characters, a gold with no content (``$$``) or an unknown form.

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
        strict: bool = False,
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
        self.strict = strict
        self._pool = pool
        self.on_crash = on_crash
        self.cache_gold = cache_gold

    @property
    def pool(self) -> MathPool:
        return self._pool if self._pool is not None else default_pool()

    def verify(self, response: str, gold: str, **options: Any) -> Verdict:
        """Judge ``response`` against ``gold``. Keyword options (``rel_tol``,
        ``accept_answer_line``, ``approx_gold``, ``timeout_s``, ``strict``, ``form``, ``number``)
        override the instance's for this call (per-task settings). Blocks until the verdict."""
        p = self._prepare(response, gold, self._call(options))
        if isinstance(p, Verdict):
            return p
        return self._finish(p, self.pool.run(p.payload, p.call.timeout_s))

    async def averify(self, response: str, gold: str, **options: Any) -> Verdict:
        """``verify`` for asyncio: awaits the worker without blocking the event loop."""
        p = self._prepare(response, gold, self._call(options))
        if isinstance(p, Verdict):
            return p
        return self._finish(p, await self.pool.arun(p.payload, p.call.timeout_s))

    def over_budget(self, response_tokens: int, budget: int, gold: str, **options: Any) -> Verdict:
        """The verdict on a response that overran the token budget: never read, never
        passed (``reason: over_budget``), with the same facts as any other verdict."""
        started = time.perf_counter()
        call = self._call(options)
        facts: dict[str, Any] = {"extracted": None, "gold": gold[:_FACT_CHARS], "source": "none",
                                 "verifier": VERIFIER_ID}  # fmt: skip
        _no_form(facts, call)
        detail = f"{response_tokens} tokens, budget {budget}"
        return _verdict(False, facts, started, "over_budget", detail)

    # ---- internals ----------------------------------------------------------------------
    def _call(self, options: dict[str, Any]) -> _Call:
        if not _OPTIONS.issuperset(options):
            unknown = set(options) - _OPTIONS
            raise TypeError(f"unknown verify options: {', '.join(sorted(unknown))}")
        get = options.get
        form = get("form")
        if form is not None and form not in FORMS:
            raise ValueError(f"unknown answer form {form!r}; known: {', '.join(sorted(FORMS))}")
        rel_tol, accept, approx = get("rel_tol"), get("accept_answer_line"), get("approx_gold")
        timeout_s, strict = get("timeout_s"), get("strict")
        return _Call(  # an option given as None is the instance's
            self.rel_tol if rel_tol is None else rel_tol,
            bool(self.accept_answer_line if accept is None else accept),
            bool(self.approx_gold if approx is None else approx),
            float(self.timeout_s if timeout_s is None else timeout_s),
            bool(self.strict if strict is None else strict),
            form,
            bool(get("number")),
        )

    def _prepare(self, response: str, gold: str, call: _Call) -> _Pending | Verdict:
        started = time.perf_counter()
        if not isinstance(response, str) or not isinstance(gold, str):
            raise TypeError("response and gold must be strings")
        if blank_gold(gold):
            raise ValueError(BLANK_GOLD)
        ex = extract_answer(response, accept_answer_line=call.accept_answer_line)
        facts: dict[str, Any] = {
            "extracted": None if ex.answer is None else ex.answer[:_FACT_CHARS],
            "gold": gold[:_FACT_CHARS],
            "source": ex.source,
            "decided_by": _decided_by(ex, call.strict),
            "verifier": VERIFIER_ID,
        }
        if ex.reasoning_boxes:
            facts["reasoning_boxes_ignored"] = ex.reasoning_boxes
        if ex.others:
            facts["other_answers"] = len(ex.others) + ex.too_many_answers
        if ex.answer is None or not ex.answer.strip():
            return _verdict(False, _no_form(facts, call), started, "no_answer")
        if call.strict and ex.too_many_answers:
            many = "too many different final answers"
            return _verdict(False, _no_form(facts, call), started, "hedged", many)
        checked = [ex.answer, *ex.others] if call.strict else [ex.answer]
        for text in checked:
            why = precheck(text)
            if why is not None:
                return _verdict(False, _no_form(facts, call), started, "too_large", why)
        if len(gold) > MAX_ANSWER_CHARS:
            raise ValueError("gold answer too long")
        payload = {
            "op": "verify",
            "answers": checked,
            "gold": gold,
            "rel_tol": call.rel_tol,
            "approx_gold": call.approx_gold,
            "cache_gold": self.cache_gold,
            "form": call.form,
            "number": call.number,
        }
        return _Pending(facts, payload, call, started, (time.perf_counter() - started) * 1e3)

    def _finish(self, p: _Pending, r: JobResult) -> Verdict:
        latency = r.latency_ms + p.prep_ms
        p.facts["queue_ms"] = round(r.queue_ms, 3)
        if r.status == "timeout":
            return _verdict(False, _no_form(p.facts, p.call), p.started, "timeout", None, latency)
        if r.status == "crash" or r.value is None or "equal" not in r.value:
            if self.on_crash == "raise":
                raise VerifierError("math verifier worker crashed")
            facts = _no_form(p.facts, p.call)
            return _verdict(False, facts, p.started, "worker_crash", None, latency)
        v = r.value
        if p.call.form is not None:
            p.facts["form"] = p.call.form
            p.facts["form_ok"] = bool(v.get("form_ok"))
            if not v.get("form_ok") and v.get("form_detail"):
                p.facts["form_detail"] = str(v["form_detail"])[:_FACT_CHARS]
        reason = None if v["equal"] else (v.get("reason") or "not_equal")
        return _verdict(bool(v["equal"]), p.facts, p.started, reason, v.get("detail"), latency)


def _decided_by(ex: ExtractionResult, strict: bool) -> DecidedBy:
    if not ex.others:
        return "single_answer"
    return "strict" if strict else "last_answer"


def _no_form(facts: dict[str, Any], call: _Call) -> dict[str, Any]:
    """A verdict reached without reading the answer's form: a demanded form is not met."""
    if call.form is not None:
        facts["form"] = call.form
        facts["form_ok"] = False
    return facts


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
    return verdict_of(passed, reason, facts, VERIFIER_ID)
