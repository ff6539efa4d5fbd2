"""Composition: all-of, any-of and weighted verdicts, with every part's facts kept."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.core.verdict import Verdict
from gymforge.verify.compose import AllOf, AnyOf, Weighted, credit
from gymforge.verify.json_schema import FieldCheck, JsonSchemaVerifier


def fixed(passed: bool, score: float | None = None, reason: str | None = None, **facts):
    verdict = Verdict(passed=passed, score=score, reason=reason, facts=facts, verifier="fixed@1")
    return lambda *a, **k: verdict


OK = fixed(True, note="ok")
HALF = fixed(False, 0.5, "partial", seen=3)
BAD = fixed(False, reason="wrong")


@pytest.mark.parametrize(
    ("combo", "passed", "score", "reason"),
    [
        (AllOf(a=OK, b=OK), True, 1.0, None),
        (AllOf(a=OK, b=HALF), False, 0.5, "b:partial"),
        (AllOf(a=BAD, b=HALF), False, 0.0, "a:wrong"),
        (AnyOf(a=BAD, b=OK), True, 1.0, None),
        (AnyOf(a=BAD, b=HALF), False, 0.5, "none_passed"),
        (Weighted({"a": (OK, 3), "b": (BAD, 1)}), False, 0.75, "below_pass_mark"),
        (Weighted({"a": (OK, 3), "b": (BAD, 1)}, pass_at=0.7), True, 0.75, None),
        (Weighted({"a": (OK, 1), "b": (HALF, 1)}), False, 0.75, "below_pass_mark"),
        (Weighted({"a": (OK, 1), "b": (OK, 2)}), True, 1.0, None),
    ],
)
def test_decisions(combo, passed: bool, score: float, reason: str | None) -> None:
    v = combo("reply")
    assert (v.passed, v.score, v.reason) == (passed, score, reason)
    assert v.facts["reason"] == reason


def test_every_parts_verdict_is_kept_in_the_facts() -> None:
    v = AllOf(first=OK, second=HALF)("x")
    parts = v.facts["parts"]
    assert list(parts) == ["first", "second"]
    assert parts["first"]["facts"] == {"note": "ok"}
    assert parts["second"] == {
        "passed": False,
        "score": 0.5,
        "reason": "partial",
        "facts": {"seen": 3},
        "verifier": "fixed@1",
    }
    assert v.verifier == "all_of(first=fixed@1,second=fixed@1)"
    w = Weighted({"a": (OK, 2), "b": (BAD, 1)})("x")
    assert w.facts["weights"] == {"a": 2.0, "b": 1.0} and set(w.facts["parts"]) == {"a", "b"}


def test_short_circuit_lists_the_skipped_parts() -> None:
    calls: list[str] = []

    def part(name: str, passed: bool):
        def run(reply: str) -> Verdict:
            calls.append(name)
            return Verdict(passed=passed, verifier=name)

        return run

    v = AllOf(a=part("a", False), b=part("b", True), short_circuit=True)("x")
    assert calls == ["a"] and v.facts["skipped"] == ["b"] and not v.passed
    calls.clear()
    v = AnyOf(a=part("a", True), b=part("b", True), short_circuit=True)("x")
    assert calls == ["a"] and v.passed and v.facts["skipped"] == ["b"]


def test_wall_clock_facts_are_lifted_so_split_timing_still_works() -> None:
    timed = fixed(True, latency_ms=4.0, answer=1)
    v = AllOf(a=timed, b=fixed(True, latency_ms=6.0, queue_ms=1.0))("x")
    assert v.facts["latency_ms"] == 10.0 and v.facts["queue_ms"] == 1.0
    assert "latency_ms" not in v.facts["parts"]["a"]["facts"]
    clean, timing = v.split_timing()
    assert timing == {"latency_ms": 10.0, "queue_ms": 1.0}
    assert "latency_ms" not in clean.facts and clean.facts["parts"]["a"]["facts"] == {"answer": 1}


def test_async_parts_need_averify() -> None:
    async def slow(reply: str) -> Verdict:
        await asyncio.sleep(0)
        return Verdict(passed=True, verifier="slow")

    combo = AllOf(sync=OK, slow=slow)
    assert asyncio.run(combo.averify("x")).passed
    with pytest.raises(TypeError, match="averify"):
        combo.verify("x")
    with pytest.raises(TypeError, match="not a Verdict"):
        AllOf(a=lambda r: True)("x")
    with pytest.raises(ValueError):
        AllOf()
    with pytest.raises(ValueError):
        Weighted({"a": (OK, 0)})


def test_real_verifiers_compose() -> None:
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    exact = JsonSchemaVerifier(schema, [FieldCheck("/n")])
    small = JsonSchemaVerifier({**schema, "properties": {"n": {"type": "integer", "maximum": 9}}})
    both = AllOf(
        value=lambda reply: exact.verify(reply, {"n": 12}),
        small=lambda reply: small.verify(reply),
    )
    v = both('{"n": 12}')
    assert not v.passed and v.reason == "small:schema_violation"
    assert v.facts["parts"]["value"]["passed"] is True
    assert v.facts["parts"]["small"]["facts"]["violations"][0]["path"] == "/n"
    assert credit(Verdict(passed=True)) == 1.0 and credit(Verdict(passed=False)) == 0.0
