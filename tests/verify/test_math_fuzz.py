"""Fuzz: whatever the text, ``verify`` returns a Verdict (it never raises) within the bound."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from math_cases import BOUNDED_MS

from gymforge.verify.math import REASONS, MathVerifier, extract_answer
from gymforge.verify.math.form import FORMS, check_form
from gymforge.verify.math.parser import parse

TOKENS = [
    "\\boxed{", "}", "{", "\\frac", "\\sqrt", "^", "_", "(", ")", "[", "]", "\\{", "\\}", ",", "=",
    "<", "\\le", "\\pm", "\\cup", "\\infty", "\\pi", "\\text{ or }", "\\text{ m}", "x", "X", "e",
    "i", "0", "1", "2", "9", "10", ".5", "-", "+", "\\cdot", "!", "|", "\\left(", "\\right)",
    "<think>", "</think>", "\\begin{pmatrix}", "&", "\\\\", "\\end{pmatrix}", "\\%", "^\\circ",
    "\\log_", "\\sin", " ", "or", "\\binom", "\\overline", "\\mathbb{R}", "'", "$", "\\",
]  # fmt: skip
latexish = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)
texts = st.one_of(st.text(max_size=200), latexish, latexish.map(lambda s: f"\\boxed{{{s}}}"))
golds = st.sampled_from(["1", "\\frac{1}{2}", "x+1", "\\{1,2\\}", "(1,2]", "\\pi", "5\\text{ m}"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(response=texts, gold=golds)
def test_verify_never_raises(verifier: MathVerifier, response: str, gold: str) -> None:
    fast = MathVerifier(timeout_s=0.5, pool=verifier.pool)
    v = fast.verify(response, gold)
    assert v.passed or v.reason in REASONS
    assert v.facts["latency_ms"] <= BOUNDED_MS


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_extraction_and_parsing_never_crash(text: str) -> None:
    extract_answer(text)
    extract_answer(text, accept_answer_line=True)
    with contextlib.suppress(ValueError):  # ParseError, TooLarge; nothing else may escape
        parse(text)
    for form in sorted(FORMS):  # a verdict on the form, whatever the text; never an exception
        ok, why = check_form(text, form)
        assert ok is (why is None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(response=texts, gold=golds, form=st.sampled_from(sorted(FORMS)), strict=st.booleans())
def test_verify_with_forms_and_strict_never_raises(
    verifier: MathVerifier, response: str, gold: str, form: str, strict: bool
) -> None:
    v = MathVerifier(timeout_s=0.5, pool=verifier.pool).verify(
        response, gold, form=form, strict=strict
    )
    assert v.passed or v.reason in REASONS
    assert isinstance(v.facts["form_ok"], bool) and v.facts["form"] == form
