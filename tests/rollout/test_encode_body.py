"""``server_http.encode_body`` (one C encoder per thread, reused) against the encoder it
stands for, ``_BODY.encode(body).encode()``: the same bytes for every body, the same error
for every body it refuses (NaN and infinities, keys and values JSON cannot hold, circular
references, lone surrogates), and a refused body leaves no state behind for the next."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.rollout import server_http
from gymforge.rollout.server_http import _BODY, encode_body


def reference(body: Any) -> bytes:
    return _BODY.encode(body).encode()


class Name(str):
    """A ``str`` subclass."""


class Plain(dict):  # type: ignore[type-arg]
    """A ``dict`` subclass."""


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=4)
    | st.builds(Name, st.text(max_size=3))
)
_KEYS = st.text(max_size=3) | st.integers(-3, 3) | st.none() | st.booleans() | st.floats(0, 1)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(_KEYS, inner, max_size=3)
        | st.dictionaries(st.text(max_size=2), inner, max_size=2).map(Plain)
    ),
    max_leaves=8,
)


def _same(body: Any) -> None:
    try:
        want = reference(body)
    except (ValueError, TypeError, RecursionError) as err:
        with pytest.raises(type(err)) as got:
            encode_body(body)
        assert str(got.value) == str(err)
        return
    assert encode_body(body) == want


@given(st.dictionaries(st.text(max_size=5), _VALUES, max_size=5))
def test_encode_body_is_the_encoder(body: dict[str, Any]) -> None:
    _same(body)
    _same({"model": "m", "messages": [{"role": "user", "content": "x"}], "extra": body})


def test_refused_bodies_leave_nothing_behind() -> None:
    looped: dict[str, Any] = {"a": []}
    looped["a"].append(looped)
    refused: list[Any] = [
        {"a": math.nan},
        {"a": [1, math.inf]},
        {"a": object()},
        {(1, 2): 1},
        looped,
        {"a": "\ud800"},
    ]
    for body in refused:
        _same(body)
        assert server_http._REUSED.markers == {}  # cleared after the error
        assert not server_http._REUSED.busy
        _same({"after": [1, {"b": 2.5}], "é": "ü"})
    _same({"deep": [[[[]]]] * 3})


def test_a_default_that_encodes_takes_the_plain_encoder() -> None:
    """A nested call (while the thread's encoder is busy) encodes with ``_BODY`` itself."""

    class Loud:
        pass

    def default(o: object) -> Any:
        return encode_body({"inner": 1}).decode()

    assert server_http._REUSED.c_encode is not None
    saved = _BODY.default
    try:
        _BODY.default = default  # type: ignore[method-assign]
        server_http._REUSED.__init__(_BODY)  # type: ignore[misc]  # rebuilt around the new default
        assert encode_body({"x": Loud()}) == reference({"x": Loud()})
    finally:
        _BODY.default = saved  # type: ignore[method-assign]
        server_http._REUSED.__init__(_BODY)  # type: ignore[misc]


def test_each_thread_has_its_own_encoder() -> None:
    bodies = [{"n": i, "s": "x" * i} for i in range(200)]
    out: dict[int, list[bytes]] = {}

    def work(k: int) -> None:
        out[k] = [encode_body(b) for b in bodies]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = [reference(b) for b in bodies]
    assert all(v == want for v in out.values())
