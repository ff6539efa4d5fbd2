"""``step_message`` builds exactly the ``StepMsg`` validation builds (values and their types,
field order, fields set, the action's scrubbed text) whenever it builds one, and gives None
for every message validation refuses or would coerce: generated messages near the fast
shape (other keys, kinds and actions; ids and flags of every type, subclasses, huge
integers; text with lone surrogates, non-ASCII, control characters). And a session's replies
are the same bytes with the fast paths as without them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from serve_helpers import REPO, TOKEN, Raw

from gymforge.serve import protocol as p
from gymforge.serve import session, wire
from gymforge.serve.fast_step import step_message
from tests.budget import examples


class Text(str):
    pass


_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 0, 1]),
    st.floats(),
    st.text(),
    st.sampled_from(["step", "reply", "reset", "tool_call", Text("step"), Text("reply"), "1"]),
    st.builds(Text, st.text(max_size=3)),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_TEXT = st.one_of(
    st.text(),
    st.lists(st.sampled_from(["a", "\ud800", "\udfff", "é", "😀", "\x00", "\x7f"])).map("".join),
    st.builds(Text, st.text(max_size=4)),
    _ODD,
)
_ACTION = st.one_of(
    st.fixed_dictionaries({"kind": st.just("reply"), "text": _TEXT}),
    st.fixed_dictionaries(
        {"kind": _ODD, "text": _TEXT}, optional={"extra": _ODD, "raw": _TEXT, "name": _ODD}
    ),
    st.fixed_dictionaries({}, optional={"kind": st.just("reply"), "text": _TEXT}),
    _ODD,
)
_MESSAGE = st.fixed_dictionaries(
    {"type": st.one_of(st.just("step"), _ODD)},
    optional={"action": _ACTION, "id": _ODD, "state": _ODD, "extra": _ODD, "seed": _ODD},
)


def same_model(a: BaseModel, b: BaseModel) -> None:
    """The same model: class, field values with their types, in order; fields set; the
    extra and private slots; and the same for every nested model."""
    assert type(a) is type(b)
    assert list(a.__dict__) == list(b.__dict__)
    for (name, x), y in zip(a.__dict__.items(), b.__dict__.values(), strict=True):
        if isinstance(x, BaseModel):
            same_model(x, y)
        else:
            assert type(x) is type(y) and x == y, name
    assert a.model_fields_set == b.model_fields_set
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__
    assert a == b and a.model_dump() == b.model_dump()


@examples(5000)
def test_step_message_is_validation(examples: int) -> None:
    @settings(max_examples=examples)
    @given(_MESSAGE)
    def check(data: dict[str, Any]) -> None:
        fast = step_message(data)
        try:
            slow = p.CLIENT_ADAPTER.validate_python(data)
        except ValidationError:
            assert fast is None
            return
        if fast is not None:
            same_model(fast, slow)

    check()


@pytest.mark.parametrize(
    "data",
    [
        {"type": "step", "action": {"kind": "reply", "text": "hi"}},
        {"type": "step", "action": {"kind": "reply", "text": "a\ud800b\udfff"}, "id": 7},
        {"type": "step", "action": {"text": "é😀\x00", "kind": "reply"}, "id": "x", "state": True},
        {"id": None, "state": False, "action": {"kind": "reply", "text": ""}, "type": "step"},
        {"type": "step", "action": {"kind": "reply", "text": "x"}, "id": -(2**63)},
    ],
)
def test_the_common_steps_take_the_fast_path(data: dict[str, Any]) -> None:
    fast = step_message(data)
    assert fast is not None
    same_model(fast, p.CLIENT_ADAPTER.validate_python(data))


FRAMES = [
    {"type": "step", "action": {"kind": "reply", "text": "hello"}, "id": 1},
    {"type": "reset", "task_id": "echo", "seed": 0, "id": "r"},
    {"type": "step", "action": {"kind": "reply", "text": "hello é \x7f"}, "id": 2},
    {"type": "step", "action": {"kind": "reply", "text": "lone \ud800"}, "id": 3, "state": True},
    {"type": "step", "action": {"kind": "reply", "text": 5}, "id": 4},
    {"type": "step", "action": {"kind": "reply", "text": "x", "extra": 1}, "id": 5},
    {"type": "step", "action": {"kind": "reply", "text": "x"}, "id": True},
    {"type": "step", "action": {"kind": "reply", "text": "x"}, "id": 2**70},
    {"type": "step", "action": {"kind": "tool_call", "name": "t"}, "id": 6},
    {"type": "step", "action": {"kind": "invalid", "raw": "r", "error": "e"}, "state": 1},
    {"type": "steps", "id": 7},
    {"type": "step", "id": 8},
    '{"type": "step", "action": {"kind": "reply", "text": "big"}, "id": 123456789012345678901}',
    '{"type": "step", "action": {"kind": "reply", "text": "nan"}, "id": NaN}',
    '{"type": "step", "action": {"kind": "reply", "text": "\\ud800"}, "id": 1e400}',
    {"type": "ping", "id": 9},
    {"type": "snapshot"},
    {"type": "step", "action": {"kind": "reply", "text": "x" * 70_000}},
    "[1, 2]",
]
ECHO = f"{REPO / 'benchmarks' / 'echo_env.py'}:EchoEnv"


def replies(start: Any) -> list[str]:
    """Every reply to ``FRAMES``, in one session of a fresh echo server, server time blanked."""
    server = start(ECHO, token=TOKEN)
    with Raw(server) as raw:
        out = []
        for frame in FRAMES:
            raw.send(frame)
            out.append(re.sub(r'"server_ms":[-+.e0-9]+', '"server_ms":0', raw.ws.recv(timeout=10)))
    return out


def test_a_sessions_replies_are_the_same_bytes_without_the_fast_paths(
    start: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = replies(start)
    monkeypatch.setattr(session, "step_message", lambda data: None)
    monkeypatch.setattr(wire, "orjson", None)
    assert replies(start) == fast
    assert fast[0].startswith('{"type":"error"') and '"type":"step_result"' in fast[2]
    assert "\\u00e9 \\u007f" in fast[2] and len({r[:20] for r in fast}) > 2
