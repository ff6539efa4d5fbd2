"""``gymforge.kit.made``'s builders against the validating constructors they stand for: the
same model (field values and their types, fields set, no extras or private values, the same
dump) for every value, hostile ones included (lone surrogates, subclasses of ``str``,
``dict`` and ``tuple``, bools for ints, non-``str`` keys, roles outside the literal), and
the same error where the constructor refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from gymforge.core.types import Message, Observation, Reply
from gymforge.kit.made import observation_of, reply_of


class Name(str):
    """A ``str`` subclass: validation turns it into a plain ``str``."""


class Plain(dict):  # type: ignore[type-arg]
    """A ``dict`` subclass: validation turns it into a plain ``dict``."""


class Row(tuple):  # type: ignore[type-arg]
    """A ``tuple`` subclass."""


class Loud(Message):
    """A ``Message`` subclass."""


_SURROGATE_TEXT = st.text(
    st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=()),
    max_size=3,
)
_TEXT = (
    st.text(max_size=6)
    | _SURROGATE_TEXT
    | st.builds(lambda a, b: a + b, st.text(max_size=3), _SURROGATE_TEXT)
)
_ANY_TEXT = _TEXT | st.builds(Name, _TEXT) | st.integers() | st.none() | st.just(b"x")
_JSONISH = st.none() | st.booleans() | st.integers() | _TEXT | st.lists(st.integers(), max_size=2)
_DICTS = st.dictionaries(_TEXT | st.builds(Name, _TEXT) | st.integers(), _JSONISH, max_size=3)


def same(got: BaseModel, want: BaseModel) -> None:
    assert type(got) is type(want)
    assert list(got.__dict__.items()) == list(want.__dict__.items())
    assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
    assert got.model_fields_set == want.model_fields_set
    assert (got.__pydantic_extra__, got.__pydantic_private__) == (None, None)
    assert (want.__pydantic_extra__, want.__pydantic_private__) == (None, None)
    assert got.model_dump() == want.model_dump() and repr(got) == repr(want)
    assert got == want


def _either(build: Any, reference: Any) -> BaseModel | None:
    """``build()``'s model, checked to raise as ``reference()`` does when it raises."""
    try:
        want = reference()
    except ValueError as err:
        with pytest.raises(type(err)):
            build()
        return None
    got = build()
    same(got, want)
    return got


@given(text=_ANY_TEXT)
def test_reply_of_is_the_constructor(text: Any) -> None:
    _either(lambda: reply_of(text), lambda: Reply(text=text))


_MESSAGES = st.lists(
    st.builds(Message, role=st.just("user"), content=_TEXT)
    | st.builds(Loud, role=st.just("user"), content=_TEXT)
    | st.builds(lambda t: {"role": "user", "content": t}, _TEXT),
    max_size=2,
)


@given(
    messages=_MESSAGES.map(tuple) | _MESSAGES | _MESSAGES.map(Row),
    data=_DICTS | _DICTS.map(Plain) | st.none(),
    tools=st.lists(_DICTS | _DICTS.map(Plain), max_size=2).map(tuple)
    | st.lists(_DICTS, max_size=1),
    tokens=st.integers(-2, 10**20) | st.booleans() | st.floats(0, 3) | st.just("3"),
    tokenizer=_ANY_TEXT,
    exact=st.booleans() | st.integers(0, 2) | st.just("true"),
)
def test_observation_of_is_the_constructor(
    messages: Any, data: Any, tools: Any, tokens: Any, tokenizer: Any, exact: Any
) -> None:
    fields = dict(tokens=tokens, tokenizer=tokenizer, tokens_exact=exact)
    got = _either(
        lambda: observation_of(messages, data, tools, tokens, tokenizer, exact),
        lambda: Observation(messages=messages, data=data, tools=tools, **fields),
    )
    if isinstance(got, Observation):  # copies, as validation makes: no dict shared
        assert got.data is not data
        assert all(t is not u for t, u in zip(got.tools, tools, strict=True))
        kept = [m for m in messages if isinstance(m, Message)]
        assert all(any(m is k for k in kept) for m in got.messages if type(m) is Loud)


def test_an_observation_holds_its_own_data() -> None:
    """The caller's dicts changed after the build leave the observation as it was."""
    data: dict[str, Any] = {"task_id": "t"}
    tool: dict[str, Any] = {"name": "f"}
    obs = observation_of((Message(role="user", content="hi"),), data, (tool,), 1, "n", True)
    data["task_id"], tool["name"] = "other", "g"
    assert obs.data == {"task_id": "t"} and obs.tools == ({"name": "f"},)
