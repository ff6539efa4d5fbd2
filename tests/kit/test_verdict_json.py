"""``turns.verdict_json`` against ``Verdict.model_dump(mode="json")``: the same dict (key
order and value types included, the facts a copy) for verdicts of every kind of fact value
(scalars, NaN and infinities, nested values, ``str`` subclasses, non-``str`` keys, tuples),
built by validation, by ``verdict_of``, by ``model_construct`` and by ``split_timing``, and a
``Verdict`` subclass."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.verdict import Verdict, verdict_of
from gymforge.kit.turns import verdict_json

pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")


class Name(str):
    """A ``str`` subclass."""


class Sub(Verdict):
    """A ``Verdict`` subclass."""


_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=3)
    | st.builds(Name, st.text(max_size=2))
    | st.lists(st.integers() | st.floats(), max_size=2)
    | st.tuples(st.integers())
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
)
_FACTS = st.dictionaries(st.text(max_size=3) | st.integers(), _VALUES, max_size=4)


def _check(verdict: Verdict) -> None:
    got, want = verdict_json(verdict), verdict.model_dump(mode="json")
    assert list(got) == list(want)
    assert repr(got) == repr(want)  # NaN-safe, types of floats and ints shown
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    assert [type(v) for v in got["facts"].values()] == [type(v) for v in want["facts"].values()]
    assert got["facts"] is not verdict.facts


@given(
    passed=st.booleans(),
    score=st.none() | st.floats(0, 1),
    reason=st.none() | st.text(max_size=3),
    facts=_FACTS,
)
def test_verdict_json_is_the_dump(passed: bool, score: Any, reason: Any, facts: Any) -> None:
    str_facts = {str(k): v for k, v in facts.items()}
    try:
        validated = Verdict(passed=passed, score=score, reason=reason, facts=facts)
    except ValueError:
        validated = None
    if validated is not None:
        _check(validated)
        _check(validated.split_timing()[0])
        _check(Sub(passed=passed, score=score, reason=reason, facts=facts))
    _check(verdict_of(passed, reason, str_facts, "v@1"))
    _check(Verdict.model_construct(passed=passed, score=score, reason=reason, facts=facts))
    timed = {**str_facts, "latency_ms": 1.5}
    _check(verdict_of(passed, reason, timed, "v").split_timing()[0])


def test_a_verdict_of_odd_values_is_dumped_by_pydantic() -> None:
    odd = Verdict.model_construct(passed=1, score=math.inf, reason=Name("r"), facts={"a": 1})
    assert verdict_json(odd) == odd.model_dump(mode="json")
    _check(Verdict.model_construct(passed=True, score=1, reason=None, facts={}, verifier="v"))
