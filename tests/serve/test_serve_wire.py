"""``gymforge.serve.wire``: orjson's decode is ``json.loads``'s value (or ``json.loads``
decides), and ``protocol.dumps`` by orjson is the ``json`` encoder's text byte for byte, or
``json``'s own error: over generated trees and texts (every code point, lone surrogates,
U+007F, control characters, floats of every exponent, integers past 64 bits) and the values
orjson writes unlike ``json`` (NaN, infinities, enums, UUIDs, subclasses, non-string keys,
cycles, deep nesting); pydantic's ``model_dump(mode="json")``, whose keys ``dumps`` does not
walk, is held to be a plain tree whatever an observation carries."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import struct
import uuid
import warnings
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.types import Message, Observation, Reply, Task
from gymforge.serve import protocol as p
from gymforge.serve import wire
from gymforge.serve.session import DUMPED
from tests.budget import examples

pytestmark = pytest.mark.skipif(wire.orjson is None, reason="orjson not installed")

REFERENCE = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
"""The wire's encoding by the standard library alone (ASCII-escaped, NaN refused)."""

_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e-3, max_value=1e-3, allow_nan=False),
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-12, 20)),
    st.integers(0, 2**64 - 1)
    .map(lambda b: struct.unpack("<d", b.to_bytes(8, "little"))[0])
    .filter(math.isfinite),
)
_TEXT = st.one_of(
    st.text(),
    st.text(st.characters(codec="ascii")),
    st.lists(st.sampled_from(["\x7f", "\x00", "\x1f", '"', "\\", "\ud800", "é", "😀", "e-7"])).map(
        "".join
    ),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), _FLOATS, _TEXT)
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_TEXT, inner, max_size=5),
    ),
    max_leaves=30,
)


def outcome(encode: Any, value: Any) -> tuple[str, str]:
    """What encoding ``value`` gives: its text, or its exception's type and message."""
    try:
        return "text", encode(value)
    except Exception as err:
        return type(err).__name__, str(err)


def encoded(result: tuple[str, Any]) -> tuple[str, Any]:
    """``outcome(encode, value)`` for ``encode`` giving the UTF-8 of that text."""
    kind, text = result
    return (kind, text.encode()) if kind == "text" else result


def same_value(a: Any, b: Any) -> bool:
    """Equal, with the same types throughout (1, 1.0 and True apart) and NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same_value, a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@examples(3000)
def test_dumps_is_the_json_encoder_on_generated_trees(examples: int) -> None:
    @settings(max_examples=examples)
    @given(_TREES, st.sampled_from(["observation", "info", "id"]))
    def check(value: Any, key: str) -> None:
        message = {"type": "step_result", key: value, "server_ms": 0.5}
        expected = outcome(REFERENCE.encode, message)
        assert outcome(p.dumps, message) == expected
        assert outcome(lambda m: p.dumps(m, DUMPED), message) == expected  # no NaN drawn
        assert outcome(lambda m: p.dumps_utf8(m, DUMPED), message) == encoded(expected)
        assert outcome(p.dumps_utf8, message) == encoded(expected)

    check()


class Colour(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


class Mapping(dict):  # type: ignore[type-arg]
    pass


@dataclasses.dataclass
class Point:
    x: int


def _cycle() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


def _deep(n: int) -> Any:
    value: Any = 0
    for _ in range(n):
        value = [value]
    return value


ODD_VALUES = [
    float("nan"),
    float("inf"),
    -float("inf"),
    [1.0, float("nan")],
    {"a": {"b": float("-inf")}},
    Colour.RED,
    Level.HIGH,
    uuid.UUID(int=7),
    Name("x"),
    {Name("k"): 1},
    Mapping(a=1),
    Point(1),
    datetime.datetime(2026, 1, 1),
    decimal.Decimal("1.5"),
    {1, 2},
    b"bytes",
    2**64,
    -(2**63) - 1,
    {1: "int key"},
    {None: 1, 2.5: 2, True: 3},
    (1, (2, [3])),
    _cycle(),
    _deep(63),
    _deep(64),
    _deep(300),
    "\ud800",
    "a\x7fb",
    "\u2028\u2029",
    "😀",
    1e-5,
    1.5e-7,
    1e16,
    -0.0,
]


@pytest.mark.parametrize("value", ODD_VALUES, ids=range(len(ODD_VALUES)))
@pytest.mark.parametrize("key", ["observation", "info"])
def test_dumps_takes_json_wherever_orjson_differs(value: Any, key: str) -> None:
    """orjson writes NaN as null and enums and UUIDs by value, refuses big integers and
    non-string keys, and passes subclasses on: ``dumps`` still gives ``json``'s text or
    ``json``'s error (a walked key, and an ``observation`` that is not a pydantic dump)."""
    message = {"type": "step_result", key: value, "id": None}
    expected = outcome(REFERENCE.encode, message)
    assert outcome(p.dumps, message) == expected
    assert outcome(p.dumps_utf8, message) == encoded(expected)
    if key == "info":
        assert outcome(lambda m: p.dumps(m, DUMPED), message) == expected
        assert outcome(lambda m: p.dumps_utf8(m, DUMPED), message) == encoded(expected)


def test_the_top_level_is_walked_too() -> None:
    for message in ({"a": float("nan")}, {1: "x"}, {"a": Colour.RED}, Mapping(a=1)):
        assert outcome(p.dumps, message) == outcome(REFERENCE.encode, message)
        assert wire.ascii_json(message) is None


_ODD_DATA = {
    "nan": float("nan"),
    "inf": [float("inf"), -float("inf")],
    "enum": Colour.RED,
    "intenum": Level.HIGH,
    "uuid": uuid.UUID(int=7),
    "sub": Name("x"),
    "keys": {Name("k"): Mapping(a=1)},
    "date": datetime.date(2026, 1, 2),
    "decimal": decimal.Decimal("1.25"),
    "set": {3},
    "bytes": b"ab",
    "tuple": (1, 2.5e-7),
    "big": 2**64,
    "text": "\x7f\x00é😀\u2028",
    "deep": _deep(40),
}


@pytest.mark.parametrize("key", sorted(_ODD_DATA))
def test_pydantic_json_dumps_are_plain_trees(key: str) -> None:
    """What ``DUMPED`` trusts: an observation (or task, or action) dumped in JSON mode is a
    plain tree, whatever its data held, so the reply's text is ``json``'s."""
    try:
        obs = Observation(
            messages=(Message(role="user", content="hi"),), data={key: _ODD_DATA[key]}
        )
        dumped = obs.model_dump(mode="json")
    except Exception:  # pydantic refuses it: no reply is built from it
        return
    assert wire.plain(dumped)
    reply = {"type": "step_result", "observation": dumped, "reward": 1.0, "id": 3}
    assert p.dumps(reply, DUMPED) == REFERENCE.encode(reply)


@examples(1000)
def test_pydantic_dumps_of_generated_models_are_plain(examples: int) -> None:
    @settings(max_examples=examples)
    @given(_TREES, _TEXT, _TEXT)
    def check(data: Any, content: str, prompt: str) -> None:
        obs = Observation(messages=(Message(role="user", content=content),), data={"x": data})
        task = Task(task_id="t", family="f", prompt=prompt, params={"p": data})
        action = Reply(text=content)
        for model in (obs, task, action):
            try:
                dumped = model.model_dump(mode="json")
            except Exception:
                continue
            assert wire.plain(dumped)
            reply = {"type": "reset_result", "observation": dumped, "task": dumped}
            reply["action"] = dumped
            assert p.dumps(reply, DUMPED) == REFERENCE.encode(reply)

    check()


@examples(3000)
def test_loads_is_json_loads_on_generated_texts(examples: int) -> None:
    @settings(max_examples=examples)
    @given(_TREES, st.sampled_from(["ascii", "utf8", "bytes"]))
    def check(value: Any, form: str) -> None:
        try:
            text = json.dumps(value, ensure_ascii=form == "ascii")
        except ValueError:  # a cycle cannot be drawn; nothing else refuses
            return
        raw: str | bytes = text
        if form == "bytes":
            raw = text.encode("utf-8", "surrogatepass")
        assert same_value(*loaded(raw))

    check()


def loaded(raw: str | bytes) -> tuple[Any, Any]:
    """``wire.loads(raw)`` and ``json.loads(raw)``, each a value or (type, message)."""
    return outcome(wire.loads, raw), outcome(json.loads, raw)


LOAD_CASES: list[str | bytes] = [
    "[NaN, Infinity, -Infinity]",
    "[1e400, -1e400, 1e-400]",
    "[123456789012345678901234567890]",
    "[18446744073709551615, 18446744073709551616, -9223372036854775808]",
    "[-9223372036854775809]",
    "[1234567890123456789.5]",
    '["1234567890123456789", 12]',
    "[0.1000000000000000055511151231257827021181583404541015625]",
    '"\\ud800"',
    '"\\udc00\\ud800"',
    '["a\ud800"]',  # a raw lone surrogate in the text itself
    '"\\ud83d\\ude00"',
    '{"a": 1, "a": 2, "b": 3}',
    "\ufeff{}",
    b"\xef\xbb\xbf{}",
    '{"a": 1}'.encode("utf-16"),
    '{"a": 1}'.encode("utf-32-le"),
    b'{"a": "\xff"}',
    '"\x00"',
    '"\t"',
    "[1,]",
    "[01]",
    "{} x",
    " \t\n\r{} ",
    "[" * 2000 + "]" * 2000,
    "[" * 900 + "]" * 900,
    "-0",
    "[1E+2, 1e-2, 0.0e0]",
    '"\\u007f\\u00e9"',
    "",
    "nul",
]


@pytest.mark.parametrize("raw", LOAD_CASES, ids=range(len(LOAD_CASES)))
def test_loads_matches_json_loads_where_orjson_parts_ways(raw: str | bytes) -> None:
    fast, slow = loaded(raw)
    assert same_value(fast, slow)


def test_the_fast_paths_are_taken() -> None:
    """A step reply (ASCII or not) is orjson's text, and a step frame orjson's value."""
    obs = Observation(messages=(Message(role="user", content="é\x7f\x01"),), data={"n": 1e-7})
    reply = {"type": "step_result", "observation": obs.model_dump(mode="json"), "reward": 0.5}
    reply.update(info={"withheld": ["info.step"]}, timing={}, server_ms=0.1, id=None)
    text = wire.ascii_json(reply, DUMPED)
    assert text is not None and text == REFERENCE.encode(reply)
    assert wire.ascii_utf8(reply, DUMPED) == text.encode()
    for data in ({"n": 0.5, "t": "one-third, 1e-7 as text"}, {"n": -1e-7}, {"n": 2.5e-5}):
        reply["observation"] = Observation(messages=(), data=data).model_dump(mode="json")
        raw = wire.ascii_utf8(reply, DUMPED)
        assert raw is not None and raw == REFERENCE.encode(reply).encode()
    with mock.patch.object(wire, "_ascii_text", side_effect=AssertionError):
        reply["observation"] = {"data": {"n": -0.5, "t": "one-third"}}
        assert wire.ascii_utf8(reply, DUMPED) == REFERENCE.encode(reply).encode()
    raw = '{"type": "step", "action": {"kind": "reply", "text": "hi"}, "id": 12}'
    expected = json.loads(raw)
    with mock.patch.object(wire.json, "loads", side_effect=AssertionError):
        assert wire.loads(raw) == expected


class Wide(Observation):
    """An ``Observation`` subclass with a field of its own: dumped by its own serializer."""

    extra: int = 3


def typed(value: Any) -> Any:
    """``value`` with every node's type beside it (NaN compared by its text)."""
    if isinstance(value, dict):
        return (type(value), [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value), [typed(v) for v in value])
    return (type(value), repr(value))


def dumped_by(dump: Any, obs: Any) -> tuple[Any, ...]:
    """``dump(obs)``'s value with its types, the warnings it gave, or its error."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out: Any = typed(dump(obs))
        except Exception as err:
            out = (type(err).__name__, str(err))
    return out, [(w.category, str(w.message)) for w in seen]


def _model_dump(obs: Any) -> Any:
    return obs.model_dump(mode="json")


@examples(1000)
def test_observation_dump_is_model_dump(examples: int) -> None:
    """``protocol.observation_dump`` calls the serializer ``model_dump`` calls, as it calls
    it: the same dict, types, warnings and errors for generated data, odd values, a
    subclass and models built without validation."""

    @settings(max_examples=examples)
    @given(_TREES, _TEXT, st.sampled_from(sorted(_ODD_DATA)), st.booleans())
    def check(data: Any, content: str, odd: str, wide: bool) -> None:
        made = Wide if wide else Observation
        message = Message(role="user", content=content)
        values = {"x": data, odd: _ODD_DATA[odd]}
        observations = [
            made(messages=(message,), data=values, tools=({"t": data},), tokens=2),
            Observation.model_construct(messages=[message], data={1: data, "s": Name("x")}),
            Observation.model_construct(messages=(Message.model_construct(role=content),)),
            Observation.model_construct(messages=(message,), tokens=Name("7"), tools=[data]),
        ]
        for obs in observations:
            assert dumped_by(p.observation_dump, obs) == dumped_by(_model_dump, obs)

    check()
