"""``whole_data_frames`` reads a chunk exactly as ``websockets``' own parser would, whenever
it reads it at all: over generated chunks of client frames (text, binary, fragments,
continuations, pings, pongs, closes, reserved bits, unmasked frames, 16- and 64-bit lengths,
minimal or not, payloads at and over the cap, truncated chunks, stray bytes), every chunk it
accepts gives, fed to a ``websockets`` server connection instead, the same messages (kind,
bytes) and nothing else: no error, nothing to send, nothing buffered, no fragment pending.
And a served session answers the same bytes, with the same close codes, with the fast read
as without it, over chunks that mix whole frames, partial ones and control frames."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serve_helpers import REPO
from test_ws_transport import Wire
from websockets.frames import Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from gymforge.serve.frames_in import whole_data_frames
from gymforge.serve.launch import ServerThread
from gymforge.serve.ws_fast import SessionProtocol
from tests.budget import examples

Start = Callable[..., ServerThread]
ECHO = f"{REPO / 'benchmarks' / 'echo_env.py'}:EchoEnv"


def raw_frame(head: int, payload: bytes, mask: bytes | None, width: int) -> bytes:
    """A frame with first byte ``head``, its length written in ``width`` bytes (0: in the
    second byte; 2 or 8: extended, even when shorter would do), masked with ``mask``."""
    n = len(payload)
    bit = 0x80 if mask is not None else 0
    if width == 0 and n < 126:
        out = bytes([head, bit | n])
    elif width == 8 or n >= 65536:
        out = bytes([head, bit | 127]) + struct.pack("!Q", n)
    else:
        out = bytes([head, bit | 126]) + struct.pack("!H", n)
    if mask is None:
        return out + payload
    return out + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


_HEADS = st.one_of(
    st.sampled_from([0x81, 0x82]),
    st.sampled_from([0x81, 0x82, 0x01, 0x02, 0x80, 0x89, 0x8A, 0x88, 0xC1, 0xA2, 0x91, 0x83]),
    st.integers(0, 255),
)
_PAYLOADS = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"", b"x" * 125, b"y" * 126, b"z" * 300, b"w" * 65536]),
)
_FRAMES = st.builds(
    raw_frame,
    _HEADS,
    _PAYLOADS,
    st.one_of(st.binary(min_size=4, max_size=4), st.none()),
    st.sampled_from([0, 0, 0, 2, 8]),
)
_CHUNKS = st.builds(
    lambda frames, cut, junk: b"".join(frames)[: cut if cut is not None else None] + junk,
    st.lists(_FRAMES, min_size=1, max_size=4),
    st.one_of(st.none(), st.integers(0, 400)),
    st.one_of(st.just(b""), st.binary(max_size=3)),
)


def websockets_reading(chunk: bytes, limit: int | None) -> tuple[Any, ...]:
    """What a server ``websockets`` connection, open and between frames, makes of ``chunk``."""
    conn = ServerProtocol(max_size=limit)
    conn.state = State.OPEN
    conn.parser = conn.parse()  # as after the handshake: the frame parser, between frames
    next(conn.parser)
    conn.receive_data(chunk)
    events = [(e.opcode, type(e.data), bytes(e.data), e.fin) for e in conn.events_received()]
    clean = (
        conn.parser_exc is None
        and conn.data_to_send() == []
        and not conn.reader.buffer
        and conn.current_size is None
        and conn.state is State.OPEN
    )
    return clean, events


@examples(3000)
def test_whole_data_frames_is_websockets_reading(examples: int) -> None:
    @settings(max_examples=examples)
    @given(_CHUNKS, st.sampled_from([None, 0, 125, 126, 300, 65536, 2**20]))
    def check(chunk: bytes, limit: int | None) -> None:
        fast = whole_data_frames(chunk, limit)
        if fast is None:
            return
        clean, events = websockets_reading(chunk, limit)
        assert clean
        kinds = {True: Opcode.TEXT, False: Opcode.BINARY}
        assert events == [(kinds[text], bytes, data, True) for text, data in fast]
        assert all(type(data) is bytes for _, data in fast)

    check()


def test_the_common_chunks_are_read_fast() -> None:
    key = b"\x01\x02\x03\x04"
    one = raw_frame(0x81, b'{"type": "ping"}', key, 0)
    assert whole_data_frames(one, 2**20) == [(True, b'{"type": "ping"}')]
    three = one + raw_frame(0x82, b"b" * 200, key, 0) + raw_frame(0x81, b"", key, 8)
    assert whole_data_frames(three, 2**20) == [
        (True, b'{"type": "ping"}'),
        (False, b"b" * 200),
        (True, b""),
    ]
    assert whole_data_frames(three[:-1], 2**20) is None
    assert whole_data_frames(raw_frame(0x81, b"x" * 200, key, 0), 199) is None


STEP = json.dumps({"type": "step", "action": {"kind": "reply", "text": "hi"}}).encode()
RESET = json.dumps({"type": "reset", "task_id": "echo", "seed": 0}).encode()
KEY = b"\x5a\x01\xc3\x7e"


def masked(head: int, payload: bytes) -> bytes:
    return raw_frame(head, payload, KEY, 0)


SPLIT = masked(0x81, STEP)
CHUNKS = [
    [masked(0x81, RESET)],
    [masked(0x81, STEP) * 3],  # pipelined: one read, three messages
    [masked(0x81, STEP) + SPLIT[:5], SPLIT[5:]],  # a frame split across two reads
    [masked(0x89, b"p") + masked(0x81, STEP)],  # a ping first: websockets reads it all
    [masked(0x01, STEP[:10]), masked(0x80, STEP[10:]) + masked(0x82, STEP)],  # fragments
    [masked(0x82, STEP) + masked(0x81, b'{"type": "ping", "id": 1}')],
    [masked(0x81, b'{"type": "ping", "id": "\xc3\xa9"}')],
    [masked(0x81, STEP) + masked(0x81, b"\xff\xfe") + masked(0x81, STEP)],  # bad UTF-8
]


def transcript(start: Start, groups: list[list[bytes]]) -> list[Any]:
    """The server's frames (server time blanked) for each group of chunks, each group
    followed by a ping message whose pong ends it (so groups are read one at a time), then
    a close frame; up to the server's close frame and its code."""
    server = start(ECHO, idle_timeout=30)
    wire = Wire(server)
    out: list[Any] = []
    try:
        for n, group in enumerate([*groups, []]):
            for chunk in group:
                wire.send(chunk)
            last = n == len(groups)
            sync = b'{"type": "ping", "id": "sync-%d"}' % n
            wire.send(masked(0x88, b"\x03\xe8") if last else masked(0x81, sync))
            while True:
                opcode, payload = wire.frame()
                if opcode == 0x8:
                    out.append(("close", struct.unpack("!H", payload[:2])[0]))
                    return out
                out.append((opcode, re.sub(rb'"server_ms":[-+.e0-9]+', b"", payload)))
                if b'"sync-%d"' % n in payload:
                    break
        return out
    finally:
        wire.close()


@pytest.mark.parametrize("upto", range(1, len(CHUNKS) + 1))
def test_a_session_reads_the_same_with_and_without_the_fast_read(
    start: Start, monkeypatch: pytest.MonkeyPatch, upto: int
) -> None:
    same_with_and_without_the_fast_read(start, monkeypatch, CHUNKS[:upto])


def same_with_and_without_the_fast_read(
    start: Start, monkeypatch: pytest.MonkeyPatch, groups: list[list[bytes]]
) -> None:
    """``groups`` give a session the same transcript with the fast read taken (at least
    once) and with it never taken."""
    taken: list[bool] = []
    original = SessionProtocol._take_frames

    def spy(self: SessionProtocol, data: bytes) -> bool:
        taken.append(original(self, data))
        return taken[-1]

    monkeypatch.setattr(SessionProtocol, "_take_frames", spy)
    fast = transcript(start, groups)
    assert True in taken
    monkeypatch.setattr(SessionProtocol, "_take_frames", lambda self, data: False)
    assert transcript(start, groups) == fast
