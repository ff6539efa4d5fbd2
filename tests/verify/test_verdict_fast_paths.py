"""The shortcuts of judging a step, each held equal to the plain code it stands for:
``Verdict.split_timing`` against ``model_copy`` of the facts without their timings,
``verdict_of`` against the validating constructor, and the math verifier's per-call settings
against their first writing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.verdict import TIMING_FACTS, Verdict, verdict_of
from gymforge.verify.math import MathVerifier
from gymforge.verify.math.form import FORMS


def reference_split(verdict: Verdict) -> tuple[Verdict, dict[str, float]]:
    """``split_timing`` as first written: two walks over the facts and ``model_copy``."""
    timing = {k: float(v) for k, v in verdict.facts.items() if k in TIMING_FACTS}
    if not timing:
        return verdict, {}
    facts = {k: v for k, v in verdict.facts.items() if k not in TIMING_FACTS}
    return verdict.model_copy(update={"facts": facts}), timing


def same_model(got: Verdict, want: Verdict) -> None:
    assert type(got) is type(want)
    assert list(got.__dict__.items()) == list(want.__dict__.items())
    assert got.model_fields_set == want.model_fields_set
    assert got.__pydantic_extra__ == want.__pydantic_extra__
    assert got.__pydantic_private__ == want.__pydantic_private__
    assert got.model_dump_json() == want.model_dump_json()


_KEYS = st.sampled_from([*sorted(TIMING_FACTS), "extracted", "gold", "reason", "detail", "x"])
_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
)


@given(
    facts=st.lists(st.tuples(_KEYS, _VALUES), max_size=8),
    timings=st.lists(
        st.tuples(st.sampled_from(sorted(TIMING_FACTS)), st.floats(0, 1e6)), max_size=4
    ),
    score=st.none() | st.floats(0, 1),
    reason=st.none() | st.text(max_size=5),
    verifier=st.none() | st.text(max_size=5),
    where=st.integers(0, 8),
)
def test_split_timing_is_the_model_copy_of_the_facts_without_timings(
    facts: list[tuple[str, Any]],
    timings: list[tuple[str, float]],
    score: float | None,
    reason: str | None,
    verifier: str | None,
    where: int,
) -> None:
    items = [(k, v) for k, v in facts if k not in TIMING_FACTS]
    items[where:where] = timings  # timings anywhere among the facts, one or several
    fields: dict[str, Any] = {"passed": bool(where % 2), "facts": dict(items)}
    if score is not None:
        fields["score"] = score
    if reason is not None:
        fields["reason"] = reason
    if verifier is not None:
        fields["verifier"] = verifier
    verdict = Verdict(**fields)
    got, got_timing = verdict.split_timing()
    want, want_timing = reference_split(verdict)
    same_model(got, want)
    assert list(got_timing.items()) == list(want_timing.items())
    assert all(type(v) is float for v in got_timing.values())
    if not want_timing:
        assert got is verdict
    else:
        assert got.facts is not verdict.facts  # the verdict split is left as it was
        assert got.model_fields_set is not verdict.model_fields_set
        assert TIMING_FACTS.isdisjoint(got.facts)


def test_split_timing_of_a_subclass_or_a_constructed_verdict_is_model_copy() -> None:
    class Scored(Verdict):
        extra_note: str = "n"

    for verdict in (
        Scored(passed=True, facts={"latency_ms": 2, "a": 1}, extra_note="m"),
        Verdict.model_construct(passed=True, facts={"queue_ms": 1.5, "a": 1}),
    ):
        got, timing = verdict.split_timing()
        want, want_timing = reference_split(verdict)
        same_model(got, want)
        assert timing == want_timing


@pytest.mark.parametrize("bad", ["soon", None, [1]])
def test_split_timing_refuses_a_timing_that_is_no_number_as_before(bad: Any) -> None:
    verdict = Verdict(passed=False, facts={"a": 1, "latency_ms": bad, "queue_ms": 1.0})
    with pytest.raises((TypeError, ValueError)) as err:
        reference_split(verdict)
    with pytest.raises(type(err.value)):
        verdict.split_timing()


class Key(str):
    """A ``str`` subclass: validation turns it into a plain ``str``."""


@given(
    passed=st.booleans() | st.integers(0, 1) | st.none(),
    reason=st.none() | st.text(max_size=5) | st.builds(Key, st.text(max_size=3)) | st.integers(),
    facts=st.dictionaries(
        st.text(max_size=4) | st.builds(Key, st.text(max_size=3)) | st.integers(), _VALUES
    ),
    verifier=st.text(max_size=5) | st.builds(Key, st.text(max_size=3)) | st.none(),
)
def test_verdict_of_is_the_validating_constructor(
    passed: Any, reason: Any, facts: dict[Any, Any], verifier: Any
) -> None:
    try:
        want = Verdict(passed=passed, reason=reason, facts=facts, verifier=verifier)
    except ValueError as err:
        with pytest.raises(type(err)):
            verdict_of(passed, reason, facts, verifier)
        return
    got = verdict_of(passed, reason, facts, verifier)
    same_model(got, want)
    assert [type(k) for k in got.facts] == [type(k) for k in want.facts]
    assert type(got.reason) is type(want.reason) and type(got.verifier) is type(want.verifier)
    assert got.facts is not facts  # a copy, as validation makes


def reference_call(verifier: MathVerifier, options: dict[str, Any]) -> dict[str, Any]:
    """``MathVerifier._call`` as first written (its fields, as a dict), and ``number``
    (math 1.2.0) as the option given, False when not."""
    fields = ("rel_tol", "accept_answer_line", "approx_gold", "timeout_s", "strict", "form",
              "number")  # fmt: skip
    unknown = set(options) - set(fields)
    if unknown:
        raise TypeError(f"unknown verify options: {', '.join(sorted(unknown))}")
    form = options.get("form")
    if form is not None and form not in FORMS:
        raise ValueError(f"unknown answer form {form!r}; known: {', '.join(sorted(FORMS))}")

    def get(name: str) -> Any:
        value = options.get(name)
        return getattr(verifier, name) if value is None else value

    values = (get("rel_tol"), bool(get("accept_answer_line")), bool(get("approx_gold")),
              float(get("timeout_s")), bool(get("strict")), form,
              bool(options.get("number")))  # fmt: skip
    return dict(zip(fields, values, strict=True))


_OPTION = st.sampled_from(
    [
        "rel_tol",
        "accept_answer_line",
        "approx_gold",
        "timeout_s",
        "strict",
        "form",
        "number",
        "nope",
    ]
)
_OPTION_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(0, 3),
    st.floats(0, 5),
    st.sampled_from([*sorted(FORMS), "decimal", "0.5"]),
)


@given(
    options=st.dictionaries(_OPTION, _OPTION_VALUE),
    own=st.tuples(st.floats(0, 1) | st.integers(0, 1), st.booleans(), st.integers(0, 2)),
)
def test_the_call_settings_are_as_first_written(
    options: dict[str, Any], own: tuple[Any, bool, int]
) -> None:
    verifier = MathVerifier(rel_tol=own[0], accept_answer_line=own[1], strict=bool(own[2]))
    verifier.approx_gold = own[2]  # an instance's value of another type, set after
    try:
        want = reference_call(verifier, options)
    except (TypeError, ValueError) as err:
        with pytest.raises(type(err), match=re.escape(str(err))):
            verifier._call(options)
        return
    got = verifier._call(options)._asdict()
    assert list(got.items()) == list(want.items())
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
