"""Hypothesis draws that bend a server's answer out of shape, for the tests that hold a
fast reader of answers to the reference (``test_chat_reply.py``, ``test_completion_reply.py``)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=8),
)
ODD = st.one_of(JSON_SCALAR, st.lists(JSON_SCALAR, max_size=3))
"""A value of any JSON type but an object (lone surrogates, NaN and big ints included)."""


def bend(draw: st.DrawFn, answer: dict[str, Any], places: list[tuple[Any, str]]) -> None:
    """Each ``(holder, key)`` of ``places`` left alone, deleted, given an odd value or, when
    a list, one odd item more; then, for an answer with choices, maybe one more choice (an
    empty one or an odd value)."""
    for holder, key in places:
        pick = draw(st.integers(0, 7))
        if pick == 0:
            del holder[key]
        elif pick == 1:
            holder[key] = draw(ODD)
        elif pick == 2 and isinstance(holder.get(key), list):
            holder[key] = [*holder[key], draw(ODD)]
    if "choices" in answer and draw(st.booleans()):
        answer["choices"] = [*answer["choices"], draw(st.one_of(st.just({}), ODD))]
