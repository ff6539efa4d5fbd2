"""Red team (red11): the served step's fast paths against the reference paths.

A hostile client's frames and a hostile environment's values, fed to the wire decode
(orjson or ``json``), the reply encode (orjson or the ``json`` C encoder), the step message
built without pydantic, and the whole-frame read, give what the reference gives: the same
value, text, error, refusal and close code.
"""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest
from pydantic import ValidationError
from test_frames_in import (
    KEY,
    RESET,
    STEP,
    Start,
    masked,
    raw_frame,
    same_with_and_without_the_fast_read,
    transcript,
)

from gymforge.core.types import Message, Observation
from gymforge.serve import protocol as p
from gymforge.serve import wire
from gymforge.serve.fast_step import step_message
from gymforge.serve.session import DUMPED
from gymforge.serve.wire import ascii_json, loads
from gymforge.serve.ws_fast import SessionProtocol

pytestmark = pytest.mark.skipif(wire.orjson is None, reason="orjson not installed")


def _decoded(fn: Any, raw: Any) -> tuple[str, str]:
    try:
        return "ok", repr(fn(raw))
    except RecursionError:
        return "RecursionError", ""
    except Exception as err:
        return type(err).__name__, str(err)


_NUMBER_PARTS = ["1", "9" * 17, "9" * 18, "1" * 19, "123456789", "0", ".", "e", "E", "-", "+"]


def _number(rng: random.Random) -> str:
    return "".join(rng.choice(_NUMBER_PARTS) for _ in range(rng.randrange(1, 5)))


def _text(rng: random.Random) -> str:
    pieces = [
        "a", "\\u0000", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u2028", "\u00e9", "\x7f",
        "\\\\", '\\"', "\\/", "\t", "\\x", "\ufeff", "1" * 19, "12345678901234567",
    ]  # fmt: skip
    return '"' + "".join(rng.choice(pieces) for _ in range(rng.randrange(4))) + '"'


def _value(rng: random.Random, depth: int) -> str:
    roll = rng.randrange(10)
    if depth > 3 or roll < 4:
        return rng.choice(
            [_number(rng), _text(rng), "NaN", "Infinity", "-Infinity", "true", "null", "1e400"]
        )
    if roll < 7:
        items = [_value(rng, depth + 1) for _ in range(rng.randrange(3))]
        return "[" + ",".join(items) + "]"
    keys = [rng.choice(['"a"', '"a"', _text(rng)]) for _ in range(rng.randrange(4))]
    return "{" + ",".join(f"{k}:{_value(rng, depth + 1)}" for k in keys) + "}"


def test_loads_is_json_loads_on_hostile_frames() -> None:
    """Numbers of every length around the 19-digit line (split by a dot, an exponent, a
    sign), lone and paired surrogate escapes, NaN and infinities, duplicate keys, a BOM, as
    text and as bytes: ``loads`` gives ``json.loads``'s value, or its error."""
    rng = random.Random(1911)
    seen_ok = 0
    for _ in range(3000):
        text = _value(rng, 0)
        if rng.randrange(5) == 0:
            text = rng.choice(["\ufeff", " ", "\n", ""]) + text + rng.choice(["", " ", ",", "\x00"])
        for raw in (text, text.encode("utf-8", "surrogatepass")):
            want = _decoded(json.loads, raw)
            assert _decoded(loads, raw) == want, raw
            seen_ok += want[0] == "ok"
    assert seen_ok > 1000


def test_loads_keeps_every_integer_exact_past_64_bits() -> None:
    for n in (2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**18, 10**19):
        for raw in (f"[{n}]", f'{{"id":{n}}}', f"{n}".encode()):
            assert repr(loads(raw)) == repr(json.loads(raw))


def _plain(rng: random.Random, depth: int) -> Any:
    roll = rng.randrange(12)
    if depth > 70 or roll < 6:
        return rng.choice(
            [
                rng.choice([1e-5, 2.5e-5, 1e-7, 1e16, 1e22, -0.0, 0.1, 5e-324, 1.5, 1e-100]),
                rng.choice([0, -1, 2**63, 2**64 - 1, True, False, None]),
                "".join(
                    rng.choice('a\u00e9\x7f\x00\x1f\u2028\ud83d\ude00"\\/e-0.0000')
                    for _ in range(3)
                ),
            ]
        )
    if roll < 9:
        items = [_plain(rng, depth + 1) for _ in range(rng.randrange(1, 3))]
        return items if roll < 8 else tuple(items)
    return {
        rng.choice(["k", "\u00e9", "\x7f", "1e-7"]) + str(i): _plain(rng, depth + 1)
        for i in range(2)
    }


def _reference_dumps(message: Any) -> tuple[str, str]:
    try:
        return "ok", wire._ENCODER.encode(message)
    except Exception as err:
        return type(err).__name__, str(err)


def test_ascii_json_is_the_json_encoder_on_hostile_trees() -> None:
    rng = random.Random(2028)
    fast = 0
    for _ in range(2000):
        message = {"type": "x", "v": _plain(rng, 0), "id": rng.choice([1, "i", None])}
        got = ascii_json(message)
        if got is not None:
            fast += 1
            assert ("ok", got) == _reference_dumps(message)
        assert (_decoded(lambda m: p.dumps(m), message)[0], p.dumps(message)) == (
            "ok",
            _reference_dumps(message)[1],
        )
    assert fast > 1000


class _Color(enum.Enum):
    RED = 2**70


class _S(str):
    def __str__(self) -> str:
        return "lie"


@pytest.mark.parametrize(
    "data",
    [
        {"nan": float("nan"), "inf": float("-inf")},
        {"big": 2**64, "neg": -(2**63) - 1},
        {"u": 2**64 - 1, "z": -0.0, "e": 1e-7, "p": 1e-5},
        {"enum": _Color.RED},
        {"sub": _S("x"), "keys": {1: 2, None: 3, 2.5: 4}},
        {"text": "\u00e9\u2028\x7f\ufeff\x00", "deep": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]},
        {"bytes": "caf\u00e9".encode()},
    ],
)
def test_a_reply_of_hostile_environment_values_is_the_json_encoders(data: dict[str, Any]) -> None:
    """The keys ``dumps`` does not walk (``DUMPED``) hold ``model_dump(mode="json")`` of what
    an environment returns: whatever that holds, the reply is the ``json`` encoder's text,
    or its error."""
    obs = Observation(messages=(Message(role="user", content="\u00e9"),), data=data)
    message = {"type": "step", "observation": obs.model_dump(mode="json"), "reward": 1.0}
    message["action"] = None
    message["id"] = 7
    want = _reference_dumps(message)
    assert _decoded(lambda m: p.dumps(m, DUMPED), message)[0] == want[0]
    if want[0] == "ok":
        assert p.dumps(message, DUMPED) == want[1]


_STEPS: list[Any] = [
    {"type": "step", "action": {"kind": "reply", "text": "hi"}},
    {"type": "step", "action": {"kind": "reply", "text": "\ud800x\u00e9"}, "id": "\udfff"},
    {"type": "step", "action": {"kind": "reply", "text": ""}, "id": True},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "id": 2**63},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "id": -(2**63)},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "id": 1.0},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "id": None, "state": False},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "state": 1},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "state": None},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "state": "true"},
    {"type": "step", "action": {"kind": "reply", "text": 5}},
    {"type": "step", "action": {"kind": "Reply", "text": "a"}},
    {"type": "step", "action": {"kind": "reply", "text": "a", "extra": 1}},
    {"type": "step", "action": {"kind": "reply"}},
    {"type": "step", "action": {"text": "a", "name": "x"}},
    {"type": "step", "action": {"kind": "invalid", "raw": "a", "error": "e"}},
    {"type": "step", "action": {"kind": "tool_call", "name": "t"}},
    {"type": "step", "action": [["kind", "reply"], ["text", "a"]]},
    {"type": "step", "action": {"kind": "reply", "text": "a"}, "seed": 1},
    {"type": "reset", "action": {"kind": "reply", "text": "a"}},
    {"action": {"kind": "reply", "text": "a"}, "id": 3, "type": "step"},
    {"type": _S("step"), "action": {"kind": "reply", "text": "a"}},
    {"type": "step", "action": {"kind": "reply", "text": _S("a")}},
]


@pytest.mark.parametrize("data", _STEPS)
def test_the_step_message_is_validations(data: dict[str, Any]) -> None:
    try:
        want: Any = p.CLIENT_ADAPTER.validate_python(data)
    except ValidationError:
        want = None
    got = step_message(data)
    if got is None:
        return  # the caller validates: the reference itself
    assert want is not None, "built a message validation refuses"
    assert got == want and type(got) is type(want)
    assert got.model_fields_set == want.model_fields_set
    assert got.action.model_fields_set == want.action.model_fields_set
    assert [type(v) for v in vars(got).values()] == [type(v) for v in vars(want).values()]
    assert repr(got.model_dump()) == repr(want.model_dump())
    assert list(vars(got)) == list(vars(want))


def test_the_common_steps_are_built() -> None:
    """The regression tests above hold something: the plain steps take the fast path."""
    assert step_message(_STEPS[0]) is not None
    assert step_message(_STEPS[1]) is not None
    assert step_message(_STEPS[20]) is not None


BAD_MESSAGE = b'{"type": "close", "id": 9}'
CHUNKS: list[list[bytes]] = [
    [masked(0x81, RESET)],
    [masked(0x81, STEP) + masked(0x81, b"\xc0\xaf") + masked(0x81, STEP)],  # overlong UTF-8
    [masked(0x81, b'{"type":"ping","id":"\xed\xa0\x80"}')],  # a surrogate in UTF-8
    [masked(0x82, b"\xef\xbb\xbf" + STEP)],  # a BOM in a binary frame
    [masked(0x81, b"\xef\xbb\xbf" + STEP)],  # a BOM in a text frame
    [masked(0x81, b'{"type":"ping","id":12345678901234567890123}')],
    [masked(0x81, b'{"type":"ping","id":1e400}')],
    [masked(0x81, b'{"type":"ping","id":NaN}')],
    [masked(0x81, b'{"type":"ping","id":1,"id":"two"}')],
    [masked(0x81, b"")],
    [raw_frame(0x81, STEP, KEY, 8)],  # a 64-bit length for a short frame
    [masked(0x81, STEP) * 40],  # more pipelined than the inbox holds
    [masked(0x81, BAD_MESSAGE) + masked(0x81, STEP) * 2],  # frames after the close
]


@pytest.mark.parametrize("upto", [2, 5, 9, 11, 12, 13])
def test_hostile_chunks_read_the_same_with_and_without_the_fast_read(
    start: Start, monkeypatch: pytest.MonkeyPatch, upto: int
) -> None:
    same_with_and_without_the_fast_read(start, monkeypatch, CHUNKS[:upto])


def test_a_frame_over_the_cap_is_not_read_fast(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame one byte over ``max_message_bytes``, pipelined behind a good one: closed
    with 1009 as ``websockets`` closes it, fast read or not."""
    big = b'{"type":"ping","id":"' + b"x" * 1100 + b'"}'
    groups = [[masked(0x81, RESET)], [masked(0x81, STEP) + masked(0x81, big)]]
    monkeypatch.setattr(SessionProtocol, "_take_frames", SessionProtocol._take_frames)
    config: dict[str, Any] = {"max_message_bytes": len(big) - 1}

    def run() -> list[Any]:
        return transcript(lambda env, **kw: start(env, **kw, **config), groups)

    fast = run()
    monkeypatch.setattr(SessionProtocol, "_take_frames", lambda self, data: False)
    assert fast == run()
    assert fast[-1] == ("close", 1009)
