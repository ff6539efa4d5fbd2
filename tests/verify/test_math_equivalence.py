"""The math verifier through the full pool: red-team attacks, facts and per-call options. The
labelled answer forms live in ``data/math_answers.jsonl`` (``test_math_answer_forms``)."""

from __future__ import annotations

import pytest
from math_cases import BOUNDED_MS, box

from gymforge.kit.redteam import _math_attacks
from gymforge.verify.math import REASONS, VERIFIER_ID, MathVerifier, is_equivalent

GOLDS = ["42", "-7", "\\frac{3}{4}", "0.5", "\\sqrt{2}", "(1, -2)", "\\{1, 3\\}", "x+1", "0"]


@pytest.mark.parametrize("name", sorted(_math_attacks()))
def test_redteam_attacks_fail(verifier: MathVerifier, name: str) -> None:
    craft = _math_attacks()[name]
    applied = 0
    for gold in GOLDS:
        reply = craft(f"The answer is \\boxed{{{gold}}}.")
        if reply is None:
            continue
        applied += 1
        v = verifier.verify(reply, gold)
        assert not v.passed, (name, gold, reply[:80], v.facts)
        assert v.reason in REASONS
        assert v.facts["latency_ms"] <= BOUNDED_MS
    assert applied >= 1


def test_the_oracle_reply_passes_for_every_attack_gold(verifier: MathVerifier) -> None:
    for gold in GOLDS:
        assert verifier.verify(f"The answer is \\boxed{{{gold}}}.", gold).passed, gold


def test_verdict_facts(verifier: MathVerifier) -> None:
    ok = verifier.verify(box("\\frac{1}{2}"), "0.5")
    assert ok.verifier == ok.facts["verifier"] == VERIFIER_ID
    assert ok.facts["extracted"] == "\\frac{1}{2}" and ok.facts["gold"] == "0.5"
    assert ok.facts["latency_ms"] >= 0 and ok.facts["source"] == "boxed"
    bad = verifier.verify(box("7" * 500), "7")
    assert len(bad.facts["extracted"]) == 200 and bad.reason == "not_equal"


def test_timing_facts_split_off(verifier: MathVerifier) -> None:
    """Wall-clock facts must leave a step's deterministic ``info`` for its ``timing``."""
    v = verifier.verify(box("2"), "2")
    clean, timing = v.split_timing()
    assert set(timing) == {"latency_ms", "queue_ms"} and not set(clean.facts) & set(timing)
    assert clean.passed and clean.facts["extracted"] == "2"


def test_per_call_options(verifier: MathVerifier) -> None:
    assert not verifier.verify(box("3.1416"), "\\pi").passed
    assert verifier.verify(box("3.1416"), "\\pi", rel_tol=1e-4).passed
    assert not verifier.verify(box("3.14"), "3.1416").passed  # a rational gold is exact...
    assert verifier.verify(box("3.1416"), "3.14159", approx_gold=True, rel_tol=1e-4).passed
    assert not verifier.verify("Answer: 5", "5").passed
    assert verifier.verify("Work.\nAnswer: 5", "5", accept_answer_line=True).passed
    assert verifier.verify(
        "**Final answer:** $\\frac{1}{2}$.", "0.5", accept_answer_line=True
    ).passed
    corrected = verifier.verify("Answer: 5\nAnswer: 6", "6", accept_answer_line=True)
    assert corrected.passed and corrected.facts["decided_by"] == "last_answer"
    hedge = verifier.verify("Answer: 5\nAnswer: 6", "6", accept_answer_line=True, strict=True)
    assert hedge.reason == "hedged" and hedge.facts["decided_by"] == "strict"
    with pytest.raises(ValueError, match="unknown answer form"):
        verifier.verify(box("1"), "1", form="decimal")
    with pytest.raises(TypeError, match="unknown verify options"):
        verifier.verify(box("1"), "1", stirct=True)
    strict = MathVerifier(strict=True, pool=verifier.pool)
    assert strict.verify("\\boxed{2} no: \\boxed{3}", "3").reason == "hedged"
    assert strict.verify("\\boxed{2} no: \\boxed{3}", "3", strict=False).passed


def test_is_equivalent_in_process() -> None:
    assert is_equivalent("\\frac{2}{4}", "0.5").equal
    r = is_equivalent("5\\text{ km}", "5\\text{ m}")
    assert not r.equal and r.reason == "unit_mismatch"
    assert not is_equivalent("1.57", "\\pi/2").equal
    assert is_equivalent("1.57", "\\pi/2", rel_tol=1e-2).equal
