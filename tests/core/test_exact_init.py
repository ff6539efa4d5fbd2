"""``Message``'s constructor (``core.built.exact_init``) against the validation it stands
for: pydantic's own ``BaseModel.__init__`` on the same keywords. For every value, hostile
ones included (lone surrogates and other non-ASCII text, subclasses of ``str``, roles
outside the literal, non-text values, NaN, unknown keywords, a subclass of ``Message``),
the two give the same model (field values and their types, fields set, no extras or
private values, the same dump and repr) or the same error; and pydantic still validates
nested and ``model_validate`` input without calling the constructor."""

from __future__ import annotations

import copy
import inspect
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from gymforge.core.types import Message, Observation, _message_fields


class Name(str):
    """A ``str`` subclass: validation turns it into a plain ``str``."""


class Loud(Message):
    """A ``Message`` subclass: always validated."""


def validated(model: type[BaseModel], **data: Any) -> BaseModel:
    """What ``model(**data)`` made before: pydantic's ``BaseModel.__init__``."""
    made = model.__new__(model)
    BaseModel.__init__(made, **data)
    return made


def outcome(make: Any) -> tuple[str, Any]:
    try:
        return "ok", make()
    except ValidationError as err:
        errors = [(e["type"], e["loc"], e["msg"]) for e in err.errors()]
        return "invalid", (err.title, errors, str(err))
    except Exception as err:
        return type(err).__name__, str(err)


def same(got: BaseModel, want: BaseModel) -> None:
    assert type(got) is type(want)
    assert list(got.__dict__.items()) == list(want.__dict__.items())
    assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
    assert got.model_fields_set == want.model_fields_set
    assert type(got.model_fields_set) is set
    assert (got.__pydantic_extra__, got.__pydantic_private__) == (None, None)
    assert (want.__pydantic_extra__, want.__pydantic_private__) == (None, None)
    assert got.model_dump() == want.model_dump()
    assert got.model_dump(mode="json") == want.model_dump(mode="json")
    assert got.model_dump_json() == want.model_dump_json()
    assert repr(got) == repr(want) and got == want and hash(got) == hash(want)


def agree(model: type[BaseModel], data: dict[str, Any]) -> BaseModel | None:
    got, want = outcome(lambda: model(**data)), outcome(lambda: validated(model, **data))
    assert got[0] == want[0], (got, want)
    if got[0] != "ok":
        assert got == want
        return None
    same(got[1], want[1])
    return got[1]  # type: ignore[no-any-return]


_SURROGATES = st.text(
    st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=()),
    max_size=3,
)
_TEXT = (
    st.text(max_size=8)
    | _SURROGATES
    | st.builds(lambda a, b: a + b, st.text(max_size=3), _SURROGATES)
    | st.text(st.characters(max_codepoint=0x7F), max_size=8)
)
_VALUES = (
    _TEXT
    | st.builds(Name, _TEXT)
    | st.none()
    | st.integers(-(2**70), 2**70)
    | st.booleans()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.just(b"bytes")
    | st.lists(_TEXT, max_size=2)
    | st.dictionaries(_TEXT, _TEXT, max_size=2)
)
_ROLES = (
    st.sampled_from(["system", "user", "assistant", "tool", "bot", "", "User", "user\ud800"])
    | st.builds(Name, st.sampled_from(["user", "tool"]))
    | _VALUES
)
_ABSENT = object()


@st.composite
def message_keywords(draw: st.DrawFn) -> dict[str, Any]:
    """Keywords of a ``Message`` call: each field present or not, of any value; now and
    then a keyword that is no field."""
    data: dict[str, Any] = {}
    for key, values in (
        ("role", _ROLES),
        ("content", _TEXT | _VALUES),
        ("name", st.none() | _TEXT | _VALUES),
        ("tool_call_id", st.none() | _TEXT | _VALUES),
    ):
        value = draw(st.just(_ABSENT) | values) if key in ("name", "tool_call_id") else None
        if key in ("role", "content"):
            value = draw(values) if draw(st.integers(0, 9)) else _ABSENT
        if value is not _ABSENT:
            data[key] = value
    if draw(st.integers(0, 9)) == 0:
        data[draw(st.sampled_from(["kind", "text", "names", "role\ud800", "é"]))] = "x"
    return data


@given(message_keywords())
def test_the_constructor_is_validation(data: dict[str, Any]) -> None:
    made = agree(Message, data)
    if isinstance(made, Message):
        assert "\ud800" not in made.content  # scrubbed as the validator scrubs


@given(message_keywords())
def test_a_subclass_is_validated(data: dict[str, Any]) -> None:
    agree(Loud, data)


@given(
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=_TEXT,
    name=st.none() | _TEXT,
    call_id=st.none() | _TEXT,
)
def test_exactly_typed_values_take_the_fast_path(
    role: str, content: str, name: str | None, call_id: str | None
) -> None:
    """Not a vacuous comparison: every exactly-typed call is built, not validated, and the
    built model is the validated one."""
    data = {"role": role, "content": content, "name": name, "tool_call_id": call_id}
    assert _message_fields(data) is not None
    assert _message_fields({"role": role, "content": Name(content)}) is None
    agree(Message, data)
    agree(Message, {"role": role, "content": content})


def test_pydantic_validation_never_calls_it() -> None:
    """pydantic takes the ``__init__`` for its own: ``model_validate`` and a model holding
    messages validate dicts as before (no call of the constructor per message)."""
    assert Message.__pydantic_custom_init__ is False
    assert Loud.__pydantic_custom_init__ is False
    data = {"role": "user", "content": "hi \ud800"}
    assert Message.model_validate(data) == validated(Message, **data)
    obs = Observation.model_validate({"messages": [data, {"role": "tool", "content": "x"}]})
    assert obs.messages[0].content == "hi \ufffd"
    with pytest.raises(ValidationError) as err:
        Observation.model_validate({"messages": [{"role": "bot", "content": "x"}]})
    assert err.value.errors()[0]["loc"] == ("messages", 0, "role")


def test_its_signature_and_copies_are_pydantic_s() -> None:
    want = (
        "(*, role: Literal['system', 'user', 'assistant', 'tool'], content: str, "
        "name: str | None = None, tool_call_id: str | None = None) -> None"
    )
    assert str(inspect.signature(Message)) == want
    made = Message(role="user", content="hi", name="n")
    for twin in (copy.copy(made), copy.deepcopy(made), pickle.loads(pickle.dumps(made))):
        same(twin, validated(Message, role="user", content="hi", name="n"))
    same(made.model_copy(), validated(Message, role="user", content="hi", name="n"))
    with pytest.raises(ValidationError):
        made.role = "tool"  # type: ignore[misc]  # frozen, as validated
    with pytest.raises(TypeError):
        Message("user", "hi")  # type: ignore[misc]  # keywords only, as pydantic's
