"""gymforge grades every labelled answer form of ``data/math_answers.jsonl`` right."""

from __future__ import annotations

from collections import Counter

import pytest
from math_cases import Case, load_cases

from gymforge.verify.math import REASONS, MathVerifier

CASES = load_cases()
REQUIRED = {
    "descriptive_words", "units", "implicit_multiplication", "last_box", "strict_mode", "form",
    "long_answer", "known_trap", "ordinary", "extraction",
}  # fmt: skip


def test_the_set_is_big_and_covers_every_class() -> None:
    assert len(CASES) >= 300
    assert len({c.id for c in CASES}) == len(CASES)
    per_class = Counter(c.cls for c in CASES)
    assert set(per_class) >= REQUIRED, REQUIRED - set(per_class)
    for cls in REQUIRED:
        labels = {c.label for c in CASES if c.cls == cls}
        assert labels == {True, False}, (cls, labels)  # each class has both passes and fails
    assert {c.form for c in CASES if c.form} == {"integer", "reduced_fraction", "simplest_radical"}
    assert any(c.form_ok for c in CASES) and any(c.form_ok is False for c in CASES)
    assert all(c.reason is None or c.reason in REASONS for c in CASES)


def _judge(verifier: MathVerifier, c: Case) -> tuple[bool, str | None, bool | None]:
    v = verifier.verify(c.response, c.gold, strict=c.strict, form=c.form)
    return v.passed, v.reason, v.facts.get("form_ok")


def test_every_case_is_graded_right(verifier: MathVerifier) -> None:
    wrong: list[str] = []
    for c in CASES:
        passed, reason, form_ok = _judge(verifier, c)
        if passed != c.label:
            kind = "FALSE PASS" if passed else "false fail"
            wrong.append(f"{kind} ({reason}) {c.short}")
        elif c.reason is not None and reason != c.reason:
            wrong.append(f"reason {reason} != {c.reason} {c.short}")
        if c.form is not None and form_ok != c.form_ok:
            wrong.append(f"form_ok {form_ok} != {c.form_ok} {c.short}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("cls", ["last_box", "strict_mode"])
def test_the_rule_that_decided_is_a_fact(verifier: MathVerifier, cls: str) -> None:
    several = [c for c in CASES if c.cls == cls and c.response.count("\\boxed") > 1]
    assert several
    for c in several:
        facts = verifier.verify(c.response, c.gold, strict=c.strict).facts
        if facts.get("other_answers"):
            assert facts["decided_by"] == ("strict" if c.strict else "last_answer"), c.short
    single = verifier.verify("So \\boxed{3}. Again: \\boxed{ 3 }.", "3").facts
    assert single["decided_by"] == "single_answer" and "other_answers" not in single
