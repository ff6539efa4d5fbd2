"""Red team (red12): ``gymforge serve``'s fast paths (the step frame read by orjson alone,
the observation dumped by its serializer, orjson's bytes sent as the reply, the inbox
keeping each message's size) against the paths they shortcut.

A hostile client's frames (every byte and a few non-ASCII characters put into and over
each place of a plain step, numbers and literals of every shape as its ``id`` and
``state``, binary frames that are not UTF-8 or carry a BOM, duplicate and escaped keys)
read as ``decode_frame`` and validation read them; a hostile environment's observations (a
subclass that dumps itself its own way, values built without validation: NaN, integers
past 64 bits, enums, ``str`` subclasses, non-``str`` keys, bytes, deep nesting, a message
whose role is an enum and whose content is None) reach the client as the same bytes with
the fast paths as without them; and the inbox's byte count stays the sum of what waits."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from serve_helpers import TOKEN, Raw

from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.errors import EpisodeStateError
from gymforge.core.types import Action, Message, Observation, Reply
from gymforge.serve import protocol as p
from gymforge.serve import session, wire
from gymforge.serve.fast_step import step_frame, step_message
from gymforge.serve.frames import FrameError, decode_frame
from gymforge.serve.ws_fast import INBOX_MESSAGES, Inbox
from tests.budget import examples

pytestmark = pytest.mark.skipif(wire.orjson is None, reason="orjson not installed")

MAX = 1 << 20


# ---- the step frame read by orjson alone ------------------------------------------------
def the_long_way(raw: str | bytes, max_bytes: int = MAX) -> tuple[Any, ...]:
    """What ``Session._dispatch`` made of ``raw`` before ``step_frame``: the frame error,
    the validation error, or the message (its repr, fields set and its action's)."""
    data = decode_frame(raw, max_bytes)
    if isinstance(data, FrameError):
        return ("frame", data.code, data.close_code)
    msg = step_message(data)
    if msg is None:
        try:
            msg = p.CLIENT_ADAPTER.validate_python(data)
        except ValidationError as err:
            return ("invalid", str(err))
    return described(msg)


def described(msg: BaseModel) -> tuple[Any, ...]:
    action = getattr(msg, "action", None)
    nested = None if action is None else (repr(action), action.model_fields_set)
    types = [type(v) for v in msg.__dict__.values()]
    return ("ok", repr(msg), list(msg.__dict__), types, msg.model_fields_set, nested)


def agrees(raw: str | bytes, max_bytes: int = MAX) -> bool:
    """``step_frame(raw)``, when it builds a message, is the long way's; True when built."""
    fast = step_frame(raw, max_bytes)
    if fast is None:
        return False
    assert described(fast) == the_long_way(raw, max_bytes), raw
    return True


BASES = [
    '{"type":"step","action":{"kind":"reply","text":"hi"},"id":1,"state":true}',
    '{ "state" : false , "action" : { "text" : "a\\u00e9" , "kind" : "reply" } , "id" : "x" ,'
    ' "type" : "step" }',
]
_PUT = [chr(c) for c in range(0x80)] + [
    "\x80", "\u00a0", "\u2028", "\u2029", "\ufeff", "\u3000", "\u200b", "\ud800", "\U0001f600",
]  # fmt: skip


def test_a_step_frame_with_any_character_put_in_or_over_any_place_reads_the_long_way() -> None:
    """Every ASCII character and a few others (non-breaking and ideographic spaces, line
    separators, a BOM, a lone surrogate, an emoji) inserted at, and written over, every
    place of a plain step (as text and as UTF-8 bytes): whatever ``step_frame`` builds is
    the long way's message. Not vacuous: many of them (whitespace, text) are built."""
    built = 0
    for base in BASES:
        for i in range(len(base) + 1):
            for c in _PUT:
                for raw in (base[:i] + c + base[i:], base[:i] + c + base[i + 1 :]):
                    built += agrees(raw)
                    built += agrees(raw.encode("utf-8", "surrogatepass"))
    assert built > 2000


_NUMBERS = [
    "0", "-0", "00", "-00", "01", "1.", ".5", "+1", "-", "1e2", "1E+2", "-1e0", "0e0", "0.0",
    "-0.0", "1e-400", "1e400", "-1e400", "NaN", "Infinity", "-Infinity", "0x10", "1_0",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1" * 40,
    "123456789012345678", "true", "false", "null", "True", "nul", '"1"', '""', "[]", "{}",
    "[1]", '{"id":1}', '"\\ud800"', '"\\u0000"', '"\\ud83d\\ude00"', '"\\udfff\\ud800"',
    '"true"', '"\\u0074rue"', "1 1", "1,",
]  # fmt: skip


@pytest.mark.parametrize("value", _NUMBERS, ids=range(len(_NUMBERS)))
@pytest.mark.parametrize("key", ["id", "state", "text", "kind", "type"])
def test_odd_numbers_and_literals_anywhere_read_the_long_way(key: str, value: str) -> None:
    """An ``id`` of huge ints, floats, -0, bools, nested ids; a ``state`` of 0/1/"true";
    and the same in ``text``, ``kind`` and ``type``: built only as the long way builds
    them (ids within 64 bits, ``state`` a bool), each the long way's message."""
    step = {"type": '"step"', "kind": '"reply"', "text": '"t"', "id": "7", "state": "true"}
    step[key] = value
    raw = (
        f'{{"type":{step["type"]},"action":{{"kind":{step["kind"]},"text":{step["text"]}}},'
        f'"id":{step["id"]},"state":{step["state"]}}}'
    )
    for frame in (raw, raw.encode(), raw + " ", "\n" + raw):
        got = agrees(frame)
        if key == "id" and value in ("0", "-0", "9223372036854775807", '"1"', '"\\u0000"'):
            assert got, frame  # the fast path is taken where it may be
        if key == "id" and value in ("9223372036854775808", "1e2", "-0.0", "true", "[1]"):
            assert not got, frame  # and not where validation would coerce or refuse


_BINARY = [
    b'\xef\xbb\xbf{"type":"step","action":{"kind":"reply","text":"bom"}}',
    '{"type":"step","action":{"kind":"reply","text":"utf16"}}'.encode("utf-16-le"),
    '{"type":"step","action":{"kind":"reply","text":"utf16"}}'.encode("utf-16"),
    '{"type":"step","action":{"kind":"reply","text":"utf32"}}'.encode("utf-32-be"),
    b'{"type":"step","action":{"kind":"reply","text":"\xed\xa0\x80"}}',  # an encoded surrogate
    b'{"type":"step","action":{"kind":"reply","text":"\xc0\xaf"}}',  # overlong
    b'{"type":"step","action":{"kind":"reply","text":"\xff"}}',
    b'{"type":"step","action":{"kind":"reply","text":"\xf4\x90\x80\x80"}}',  # past U+10FFFF
    b'{"type":"step","action":{"kind":"reply","text":"ok"}}\x00',
    b'{"type":"step","action":{"kind":"reply","text":"\\ud800"}}',
    b'{"\\u0074ype":"step","act\\u0069on":{"\\u006bind":"reply","text":"escaped keys"}}',
    b'{"type":"reset","action":{"kind":"reply","text":"d"},"type":"step"}',
    b'{"type":"step","action":{"kind":"reply","text":"d"},"type":"reset"}',
    b'{"type":"step","action":{"kind":"reply","text":"d","kind":"invalid"}}',
    b'{"type":"step","action":{"kind":"reply","text":1,"text":"later"}}',
    b'{"type":"step","action":{"kind":"reply","text":"x","extra":1}}',
    b'{"type":"step","action":{"kind":"reply"},"text":"x"}',
    b'{"type":"step","action":{"kind":"reply","text":"x"},"id":1,"id":2.5}',
    b'{"type":"step","action":{"kind":"reply","text":"x"},"id":{"id":1}}',
]


@pytest.mark.parametrize("raw", _BINARY, ids=range(len(_BINARY)))
def test_binary_and_odd_frames_read_the_long_way(raw: bytes) -> None:
    """A BOM, UTF-16 and UTF-32 (which ``json`` reads from bytes), encoded surrogates,
    overlong and invalid UTF-8, a trailing NUL, escaped keys, duplicate keys (the last
    wins, where it was first put), extra and doubled action fields: as bytes and, where
    they decode, as text."""
    frames: list[str | bytes] = [raw]
    with contextlib.suppress(UnicodeDecodeError):
        frames.append(raw.decode())
    for frame in frames:
        agrees(frame)
    if raw.startswith(b'{"\\u0074ype"'):
        assert agrees(raw)  # an escaped key is the same key


@pytest.mark.parametrize("max_bytes", [64, 255, 256, 257, 1024])
def test_a_frame_near_the_cap_reads_the_long_way(max_bytes: int) -> None:
    """Text near a quarter of the cap and past it, ASCII and 4-byte characters: built only
    under a quarter (never too large, however encoded), the long way's message; over the
    cap, the long way's ``too_large``."""
    for n in range(0, max_bytes, 7):
        for ch in ("a", "\U0001f600", "\u00e9"):
            raw = '{"type":"step","action":{"kind":"reply","text":"' + ch * n + '"}}'
            for frame in (raw, raw.encode()):
                built = agrees(frame, max_bytes)
                assert not built or 4 * len(frame) <= max_bytes
                if len(raw.encode()) > max_bytes:
                    assert the_long_way(frame, max_bytes)[:2] == ("frame", "too_large")


@examples(300)
def test_generated_frames_in_any_key_order_read_the_long_way(examples: int) -> None:
    @settings(max_examples=examples)
    @given(
        st.dictionaries(
            st.sampled_from(["type", "action", "id", "state", "ty\\u0070e", "x"]),
            st.sampled_from(['"step"', '"reset"', "1", "true", "null", '"t"', "-0", "1.0"])
            | st.sampled_from(
                ['{"kind":"reply","text":"a"}', '{"text":"\\ud83d\\ude00","kind":"reply"}']
            ),
            max_size=5,
        ),
        st.lists(st.sampled_from([" ", "\n", "\t", "\r", ""]), min_size=4, max_size=4),
    )
    def check(parts: dict[str, str], spaces: list[str]) -> None:
        a, b, c, d = spaces
        raw = "{" + ",".join(f'{a}"{k}"{b}:{c}{v}{d}' for k, v in parts.items()) + "}"
        agrees(raw)
        agrees(raw.encode())

    check()


# ---- the inbox keeps each message's size -------------------------------------------------
class _Proto:
    """What an ``Inbox`` uses of its connection: reading paused or not, and the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.read_paused = False
        self.pauses = 0

    def pause(self) -> None:
        self.read_paused = True
        self.pauses += 1

    def resume(self) -> None:
        self.read_paused = False


@examples(200)
def test_the_inbox_counts_what_waits_and_pauses_past_its_budget(examples: int) -> None:
    """Messages put (as ``_deliver`` puts them, their size beside), disconnects put as
    uvicorn puts them, and gets, in any order: what waits is counted exactly (never
    negative, never drifting when the session edits an event it got), reading pauses once
    ``INBOX_MESSAGES`` messages or more than the budget wait, and it resumes once drained."""

    @settings(max_examples=examples)
    @given(
        st.lists(
            st.one_of(
                st.tuples(st.just("text"), st.text(max_size=40)),
                st.tuples(st.just("bytes"), st.binary(max_size=40)),
                st.tuples(st.just("disconnect"), st.none()),
                st.tuples(st.just("get"), st.none()),
            ),
            max_size=40,
        ),
        st.integers(1, 64),
    )
    def check(ops: list[tuple[str, Any]], budget: int) -> None:

        async def run() -> None:
            proto = _Proto(asyncio.get_running_loop())
            inbox = Inbox(proto, budget)  # type: ignore[arg-type]  # the stand-in above
            waiting: list[tuple[Any, int]] = []
            for kind, value in ops:
                if kind == "get":
                    if not waiting:
                        continue
                    event = await inbox.get()
                    want, _ = waiting.pop(0)
                    assert event is want
                    event["text"] = "edited after it was read" * 10  # the session's to keep
                else:
                    if kind == "disconnect":
                        event = {"type": "websocket.disconnect", "code": 1000}
                        inbox.put_nowait(event)
                        size = 0
                    else:
                        event = {"type": "websocket.receive", kind: value}
                        size = len(value)
                        inbox.put_message(event, size)
                    waiting.append((event, size))
                    over = len(waiting) >= INBOX_MESSAGES or sum(s for _, s in waiting) > budget
                    assert not over or proto.read_paused
                assert inbox._bytes == sum(s for _, s in waiting) >= 0
                assert inbox.qsize() == len(waiting)
            while waiting:
                assert await inbox.get() is waiting.pop(0)[0]
            assert inbox._bytes == 0 and inbox.empty() and not proto.read_paused

        asyncio.run(run())

    check()


# ---- a hostile environment's observations, served ---------------------------------------
class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class StrRole(enum.StrEnum):
    USER = "user"


class Name(str):
    pass


class Secretive(Observation):
    """An observation subclass that dumps itself without its ``secret`` (its own
    ``model_dump``): the reply must not carry it."""

    secret: str = ""

    def model_dump(self, **kw: Any) -> dict[str, Any]:
        kw.setdefault("exclude", {"secret"})
        return super().model_dump(**kw)


SECRET = "the-answer-is-4817"


def _deep(n: int) -> Any:
    value: Any = "bottom"
    for _ in range(n):
        value = [value]
    return value


def _observation(kind: str) -> Observation:
    hi = Message(role="user", content="hi")
    made = Observation.model_construct
    odd: dict[str, Any] = {
        "nan": {"x": float("nan"), "y": [float("inf")]},
        "big": {"n": 2**64, "m": -(2**63) - 1, "k": 2**63},
        "enum": {"e": Colour.RED, "l": Level.HIGH, "s": StrRole.USER},
        "sub": {"s": Name("x"), Name("k"): 1},
        "keys": {1: "one", "1": "text one", None: 0, 2.5: "f"},
        "bytes": {"b": b"\xff\xfe\x00"},
        "deep": {"d": _deep(90)},
        "floats": {"f": [1e-7, 0.00001, -0.0, 1e16, 2.5e-5, 5e-324, -1e-7]},
        "text": {"t": "\u2028\x7f\x00\ud800\U0001f600\ufeff"},
    }
    if kind == "secret":
        return Secretive(messages=(hi,), secret=SECRET)
    if kind == "role":
        return made(messages=(Message.model_construct(role=StrRole.USER, content=None),))
    if kind == "tokens":
        return made(messages=[hi], tokens=2**70, tools=[{"t": Level.HIGH}])
    if kind in odd:
        return made(messages=(hi,), data=odd[kind])
    return Observation(messages=(Message(role="user", content=kind),), data={"said": kind})


class HostileEnv:
    """Answers each reply with the observation its text names (``_observation``)."""

    spec = EnvSpec("red12-hostile", "1.0.0", description="odd observations")

    def __init__(self) -> None:
        self.steps = -1

    async def reset(self, task_id: str, seed: int) -> Observation:
        self.steps = 0
        return _observation(task_id)

    async def step(self, action: Action) -> StepResult:
        if self.steps < 0:
            raise EpisodeStateError("step before reset")
        self.steps += 1
        text = action.text if isinstance(action, Reply) else ""
        return StepResult.make(_observation(text), {"r": 0.25}, info={"step": self.steps})

    async def snapshot(self) -> dict[str, Any]:
        return {"steps": self.steps}

    async def close(self) -> None:
        self.steps = -1


HOSTILE = f"{Path(__file__).resolve()}:HostileEnv"
KINDS = ["secret", "role", "tokens", "nan", "big", "enum", "sub", "keys", "bytes", "deep"]
KINDS += ["floats", "text", "plain \u00e9"]


def _step(text: str, extra: str = "") -> str:
    return json.dumps({"type": "step", "action": {"kind": "reply", "text": text}}) + extra


def _frames() -> list[str | bytes]:
    frames: list[str | bytes] = [_step("before reset")]
    for kind in KINDS:
        frames.append(json.dumps({"type": "reset", "task_id": kind, "seed": 1, "id": kind}))
        frames.append(_step(kind))
        frames.append(_step(kind).encode())  # a binary frame
    frames += [
        '{"type":"step","action":{"kind":"reply","text":"secret"},"id":"\\u00e9","state":true}',
        '{"type":"step","id":9223372036854775808,"action":{"text":"big","kind":"reply"}}',
        '{"type":"step","action":{"kind":"reply","text":"enum"},"state":1}',
        '{"type":"step","action":{"kind":"reply","text":"\\ud800"},"id":-0}',
        '{"type":"step","action":{"kind":"reply","text":"x","extra":1}}',
        '{"type":"step","type":"ping","action":{"kind":"reply","text":"x"}}',
        '{"\\u0074ype":"step","action":{"kind":"reply","text":"keys"},"id":1.0}',
        json.dumps({"type": "ping", "id": 1}),
        "\ufeff" + _step("bom"),  # not JSON to ``json``: fatal, the last
    ]
    return frames


def _replies(start: Any) -> list[str]:
    server = start(HOSTILE, token=TOKEN)
    out = []
    with Raw(server) as raw:
        for frame in _frames():
            raw.ws.send(frame)
            reply = raw.ws.recv(timeout=10)
            assert isinstance(reply, str)
            out.append(re.sub(r'"server_ms":[-+.e0-9]+', '"server_ms":0', reply))
            if '"fatal":true' in reply:
                break
    return out


def test_a_hostile_environment_s_replies_are_the_same_bytes_without_the_fast_paths(
    start: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each odd observation, on reset and on a step sent as text and as a binary frame,
    then odd step frames and a fatal one: the same reply bytes with every fast path as with
    none (the frame decoded and validated, ``json`` writing, ``model_dump`` dumping). And the
    subclass's secret, which its own ``model_dump`` leaves out, is in no reply."""
    fast = _replies(start)
    monkeypatch.setattr(session, "step_frame", lambda raw, max_bytes: None)
    monkeypatch.setattr(session, "step_message", lambda data: None)
    monkeypatch.setattr(wire, "orjson", None)
    monkeypatch.setattr(p, "observation_dump", lambda obs: obs.model_dump(mode="json"))
    slow = _replies(start)
    assert len(fast) == len(_frames()) and '"code":"bad_json"' in fast[-1]
    for i, (got, want) in enumerate(zip(fast, slow, strict=True)):
        assert got == want, (i, _frames()[i])
    assert not any(SECRET in reply for reply in fast)
    assert sum('"type":"step_result"' in r for r in fast) > len(KINDS)


def test_an_observation_subclass_dumps_itself_its_own_way() -> None:
    """``observation_dump`` is ``model_dump(mode="json")`` for a subclass that has its own
    ``model_dump`` (the field it hides stays hidden), as for a plain observation."""
    obs = _observation("secret")
    assert p.observation_dump(obs) == obs.model_dump(mode="json")
    assert SECRET not in json.dumps(p.observation_dump(obs))
    plain = _observation("plain")
    assert p.observation_dump(plain) == plain.model_dump(mode="json")
