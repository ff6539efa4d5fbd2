"""``canonical_json`` reuses one C encoder per thread: the same text and the same errors as
the encoder built for each call (``_CANONICAL.encode``), also after an error, in nested
calls and across threads."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core import seeding
from gymforge.core.seeding import _CANONICAL, canonical_json

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats()
    | st.text()
    | st.sets(st.integers(), max_size=2)
    | st.binary(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(
            st.text(max_size=4) | st.integers() | st.floats() | st.none(), inner, max_size=4
        )
    ),
    max_leaves=12,
)


def outcome(encode: Any, value: Any) -> tuple[str, str]:
    try:
        return "text", encode(value)
    except Exception as err:
        return type(err).__name__, str(err)


def test_the_reused_encoder_is_in_use() -> None:
    assert seeding._REUSED.c_encode is not None


@given(VALUES)
def test_same_text_and_errors_as_a_fresh_encoder(value: Any) -> None:
    assert outcome(canonical_json, value) == outcome(_CANONICAL.encode, value)
    assert not seeding._REUSED.markers  # nothing left behind, whatever was raised


def test_an_error_leaves_no_marker_behind() -> None:
    shared: list[Any] = [1]
    bad = {"a": shared, "b": [shared, math.nan]}
    with pytest.raises(ValueError, match="Out of range"):
        canonical_json(bad)
    assert canonical_json({"a": shared, "b": [shared]}) == '{"a":[1],"b":[[1]]}'
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        canonical_json(circular)
    assert canonical_json([[], []]) == "[[],[]]"


class Nested(dict[str, Any]):
    """A dict subclass that, once, encodes its parent while being encoded in it."""

    parent: Any = None

    def items(self) -> Any:
        parent, self.parent = self.parent, None
        if parent is not None:  # being encoded, so among the outer call's markers
            assert canonical_json(parent) == '[{"x":1}]'
        return super().items()


def test_a_nested_call_has_markers_of_its_own() -> None:
    inner = Nested(x=1)
    parent = [inner]
    inner.parent = parent
    assert canonical_json(parent) == '[{"x":1}]'


def test_threads_each_encode_alike() -> None:
    value = {"k": [list(range(50)), {"z": 1.5, "a": None}] * 20}
    expected = _CANONICAL.encode(value)
    results: list[bool] = []

    def work() -> None:
        results.extend(canonical_json(value) == expected for _ in range(300))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 1200
