"""Red team (red12): ``Message``'s constructor (``core.built.exact_init``) against
pydantic's own ``BaseModel.__init__`` on hostile keywords the first tests do not draw.

Roles that are enums (a ``str`` enum valued ``"user"``, a plain enum, an enum whose text is
not its value), ``str`` subclasses whose ``==`` and ``hash`` lie (saying yes to a role, or
hashing as one), keywords that name a slot or a method of the model, ``None`` content, a
re-run ``__init__`` on a made message, and messages nested in an ``Observation`` built and
validated every way: the constructor gives validation's model (values with their types,
fields set, slots) or validation's error, never a model validation refuses."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from gymforge.core.types import Message, Observation, _message_fields
from tests.budget import examples
from tests.core.test_exact_init import outcome, validated


def agree(data: dict[str, Any]) -> Message | None:
    """``Message(**data)`` is validation's model, or validation's error."""
    got, want = outcome(lambda: Message(**data)), outcome(lambda: validated(Message, **data))
    assert got[0] == want[0], (data, got, want)
    if got[0] != "ok":
        assert got == want
        return None
    a, b = got[1], want[1]
    assert type(a) is type(b) is Message
    assert list(a.__dict__) == list(b.__dict__)
    assert [type(v) for v in a.__dict__.values()] == [type(v) for v in b.__dict__.values()]
    assert list(a.__dict__.values()) == list(b.__dict__.values())
    assert a.model_fields_set == b.model_fields_set
    assert (a.__pydantic_extra__, a.__pydantic_private__) == (None, None)
    assert a.model_dump_json() == b.model_dump_json() and repr(a) == repr(b)
    return a  # type: ignore[no-any-return]


class StrRole(enum.StrEnum):
    USER = "user"
    TOOL = "tool"


class PlainRole(enum.Enum):
    USER = "user"


class TwoFaced(enum.StrEnum):
    """A ``str`` enum whose text (``"bot"``) is not its value (``"user"``)."""

    def __new__(cls, value: str) -> TwoFaced:
        made = str.__new__(cls, "bot")
        made._value_ = value
        return made

    USER = "user"


class Yes(str):
    """Equal to anything, hashing as ``"user"``: a set or a ``==`` would take it as a role."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("user")


class Shadow(str):
    """Text of ``"bot"`` that hashes and compares as ``"user"``."""

    def __eq__(self, other: object) -> bool:
        return other == "user"

    def __hash__(self) -> int:
        return hash("user")


_ODD_ROLES = [
    StrRole.USER,
    StrRole.TOOL,
    PlainRole.USER,
    TwoFaced.USER,
    Yes("bot"),
    Shadow("bot"),
    b"user",
    bytearray(b"user"),
    "user ",
    "USER",
    "user\x00",
    "us\u0435r",  # a Cyrillic e
]
_ODD_TEXT = [
    None,
    StrRole.USER,
    TwoFaced.USER,
    Yes("x"),
    b"x",
    memoryview(b"x"),
    1,
    1.5,
    True,
    ["x"],
    ("x",),
    {"x": 1},
    "\ud800",
    "\u2028\x00\ufeff",
]


@pytest.mark.parametrize("role", _ODD_ROLES, ids=range(len(_ODD_ROLES)))
def test_an_odd_role_is_validated(role: Any) -> None:
    """A role that is not exactly a ``str`` of the literal is never built: validation makes
    of it what it made before (a plain ``str`` role, or an error)."""
    data = {"role": role, "content": "hi"}
    assert _message_fields(data) is None or (type(role) is str and role in ("user", "tool"))
    made = agree(data)
    if made is not None:
        assert type(made.role) is str and made.role in ("system", "user", "assistant", "tool")


@pytest.mark.parametrize("value", _ODD_TEXT, ids=range(len(_ODD_TEXT)))
@pytest.mark.parametrize("field", ["content", "name", "tool_call_id"])
def test_an_odd_text_is_validated(field: str, value: Any) -> None:
    data: dict[str, Any] = {"role": "user", "content": "hi", field: value}
    made = agree(data)
    if made is not None:
        got = getattr(made, field)
        assert got is None or type(got) is str
        assert got is None or "\ud800" not in got


_SLOT_NAMES = [
    "self",
    "__dict__",
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
    "model_config",
    "model_dump",
    "__class__",
    "ROLE",
    "role ",
]


@pytest.mark.parametrize("key", _SLOT_NAMES)
def test_a_keyword_naming_a_slot_is_refused_as_before(key: str) -> None:
    """A keyword beside exactly-typed fields that names a slot or a method: refused as an
    extra field, as validation refuses it, and no slot is overwritten."""
    data = {"role": "user", "content": "hi", key: {"role": "tool"}}
    assert _message_fields(data) is None
    assert agree(data) is None


def test_a_made_message_is_re_initialised_as_validation_would() -> None:
    """``__init__`` called again on a made message (frozen): what ``BaseModel.__init__``
    does to a validated one, for exact and odd keywords alike."""
    for data in (
        {"role": "tool", "content": "again", "name": "n"},
        {"role": StrRole.TOOL, "content": "again"},
        {"role": "bot", "content": "again"},
    ):
        fast, slow = (
            Message(role="user", content="hi"),
            validated(Message, role="user", content="hi"),
        )
        got = outcome(lambda m=fast, d=data: m.__init__(**d))  # type: ignore[misc]
        want = outcome(lambda m=slow, d=data: BaseModel.__init__(m, **d))
        assert got == want
        assert list(fast.__dict__.items()) == list(slow.__dict__.items())
        assert fast.model_fields_set == slow.model_fields_set


_KEYWORD_VALUES = st.one_of(
    st.sampled_from(_ODD_ROLES + _ODD_TEXT),
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.text(max_size=4),
    st.none(),
)


@examples(300)
def test_any_mix_of_odd_keywords_is_validation(examples: int) -> None:
    @settings(max_examples=examples)
    @given(
        st.dictionaries(
            st.sampled_from(["role", "content", "name", "tool_call_id"]),
            _KEYWORD_VALUES,
            max_size=4,
        )
    )
    def check(data: dict[str, Any]) -> None:
        agree(data)

    check()


def test_messages_in_an_observation_are_validated_every_way() -> None:
    """An ``Observation`` holding messages made by the constructor or given as dicts with odd
    values: the constructor is never called for them, the
    dicts are validated (the lone surrogate scrubbed, the enum role a ``str``, a lying
    ``str`` subclass the literal it equals), and the odd ones refused where validation
    refuses them."""
    calls: list[Any] = []
    made = Message(role="user", content="a\ud800")
    original = Message.__init__

    def spy(self: Message, /, **data: Any) -> None:
        calls.append(data)
        original(self, **data)

    Message.__init__ = spy  # type: ignore[method-assign]
    try:
        obs = Observation.model_validate(
            {
                "messages": [
                    made,
                    {"role": StrRole.TOOL, "content": "b\udc00"},
                    {"role": "user", "content": "c", "name": None},
                ]
            }
        )
        lying = Observation.model_validate({"messages": [{"role": Shadow("bot"), "content": "x"}]})
        with pytest.raises(ValidationError):
            Observation.model_validate({"messages": [{"role": TwoFaced.USER, "content": "x"}]})
        with pytest.raises(ValidationError):
            Observation.model_validate({"messages": [{"role": "user", "content": None}]})
    finally:
        Message.__init__ = original  # type: ignore[method-assign]
    assert calls == []
    assert obs.messages[0] is made and made.content == "a\ufffd"
    assert obs.messages[1].role == "tool" and type(obs.messages[1].role) is str
    assert obs.messages[1].content == "b\ufffd"
    assert obs.messages[2].model_fields_set == {"role", "content", "name"}
    assert lying.messages[0] == validated(Message, role=Shadow("bot"), content="x")
    assert type(lying.messages[0].role) is str and str.__str__(lying.messages[0].role) == "user"
