"""``step_message`` builds exactly the ``StepMsg`` validation builds (values and their types,
field order, fields set, the action's scrubbed text) whenever it builds one, and gives None
for every message validation refuses or would coerce: generated messages near the fast
shape (other keys, kinds and actions; ids and flags of every type, subclasses, huge
integers; text with lone surrogates, non-ASCII, control characters). And a session's replies
are the same bytes with the fast paths as without them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from serve_helpers import REPO, TOKEN, Raw

from gymforge.serve import protocol as p
from gymforge.serve import session, wire
from gymforge.serve.fast_step import step_frame, step_message
from gymforge.serve.frames import FrameError, decode_frame
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


_ID_TOKENS = st.sampled_from(
    [
        "1",
        "-0",
        "0.0",
        "1e2",
        "1E400",
        "-1e400",
        "NaN",
        "Infinity",
        "-Infinity",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "123456789012345678901234567890",
        "true",
        "null",
        '"x"',
        '"\\ud800"',
        "[1]",
        "{}",
    ]
)
_TEXT_TOKENS = st.one_of(
    st.text().map(lambda t: json.dumps(t, ensure_ascii=False)),
    st.text().map(json.dumps),
    st.lists(
        st.sampled_from(["a", "\\ud800", "\\udfff", "\\ud83d\\ude00", "\\u0000", "é", "\\n", "19"])
    ).map(lambda parts: '"' + "".join(parts) + '"'),
    _ID_TOKENS,
)


@st.composite
def step_frames(draw: st.DrawFn) -> str | bytes:
    """The text of a step frame (or near one): ids and texts of every JSON spelling (huge
    and non-finite numbers, escaped lone surrogates), repeated keys, odd spaces and
    encodings, other messages and what is not JSON."""
    space = draw(st.sampled_from(["", " ", "\n\t ", "\r"]))
    kind = draw(st.sampled_from(['"step"', '"step"', '"step"', '"reset"', "1"]))
    parts = [f'"type":{space}{kind}']
    action = f'{{"kind":"reply",{space}"text":{draw(_TEXT_TOKENS)}}}'
    if draw(st.integers(0, 9)) == 0:
        action = draw(st.sampled_from(['{"kind":"reply"}', "[]", '{"kind":"tool_call"}']))
    parts.append(f'"action":{action}')
    flags = st.sampled_from(["true", "false", "false", "0"])
    for key, tokens in (("id", _ID_TOKENS), ("state", flags)):
        for _ in range(draw(st.integers(0, 2))):  # repeated: the last one counts
            parts.append(f'"{key}":{space}{draw(tokens)}')
    if draw(st.integers(0, 9)) == 0:
        parts.append(f'"{draw(st.sampled_from(["seed", "extra", "id"]))}":{draw(_ID_TOKENS)}')
    parts = draw(st.permutations(parts))
    text = space + "{" + f",{space}".join(parts) + "}" + space
    text = draw(st.sampled_from([text] * 6 + ["\ufeff" + text, text[:-2], "[" + text + "]"]))
    encoding = draw(st.sampled_from(["str", "str", "str", "utf-8", "utf-16", "utf-8-sig"]))
    return text if encoding == "str" else text.encode(encoding, "surrogatepass")


@examples(5000)
def test_step_frame_is_decode_and_validation(examples: int) -> None:
    """Whenever ``step_frame`` gives a message, the long way (``decode_frame``, then
    validation) gives the same one; it gives one for the plain steps."""
    taken = 0

    @settings(max_examples=examples)
    @given(step_frames(), st.sampled_from([8 * 2**20, 200, 120, 60, 4]))
    def check(raw: str | bytes, max_bytes: int) -> None:
        nonlocal taken
        fast = step_frame(raw, max_bytes)
        if fast is None:
            return
        taken += 1
        data = decode_frame(raw, max_bytes)
        assert not isinstance(data, FrameError)
        same_model(fast, p.CLIENT_ADAPTER.validate_python(data))

    check()
    assert taken > 0


@pytest.mark.parametrize(
    "raw",
    [
        '{"type":"step","action":{"kind":"reply","text":"hi"}}',
        b'{"type":"step","action":{"kind":"reply","text":"\\ud83d\\ude00 \xc3\xa9"},'
        b'"id":-9223372036854775808}',
        '{"id":1,"id":"x","type":"step","state":false,"state":true,"action":{"text":"","kind":"reply"}}',
    ],
)
def test_the_common_frames_take_the_fast_path(raw: str | bytes) -> None:
    fast = step_frame(raw, 1000)
    assert fast is not None
    data = decode_frame(raw, 1000)
    assert not isinstance(data, FrameError)
    same_model(fast, p.CLIENT_ADAPTER.validate_python(data))


@pytest.mark.parametrize(
    "raw",
    [
        '{"type":"step","action":{"kind":"reply","text":"x"},"id":18446744073709551616}',
        '{"type":"step","action":{"kind":"reply","text":"x"},"id":1e400}',
        '{"type":"step","action":{"kind":"reply","text":"\\ud800"}}',
        '\ufeff{"type":"step","action":{"kind":"reply","text":"x"}}',
        b'{"type":"step","action":{"kind":"reply","text":"\xed\xa0\x80"}}',
        '{"type":"step","action":{"kind":"reply","text":"x"}}',  # over a quarter of the cap
    ],
)
def test_what_orjson_reads_otherwise_takes_the_long_way(raw: str | bytes) -> None:
    assert step_frame(raw, 4 * len(raw) - 1) is None


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
    monkeypatch.setattr(session, "step_frame", lambda raw, max_bytes: None)
    monkeypatch.setattr(wire, "orjson", None)
    assert replies(start) == fast
    assert fast[0].startswith('{"type":"error"') and '"type":"step_result"' in fast[2]
    assert "\\u00e9 \\u007f" in fast[2] and len({r[:20] for r in fast}) > 2
