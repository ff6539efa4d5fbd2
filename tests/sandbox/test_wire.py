"""The wire format: frames and the plain-value codec (no sandbox needed)."""

from __future__ import annotations

import json
import math
import os

import pytest

from gymforge.sandbox import wire


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        2**64,
        2**5000 + 1,
        -(2**20000),
        1.5,
        -0.0,
        "é\x00\u2603",
        b"\x00\xff",
        [1, [2, [3]]],
        (1, (2,)),
        (),
        {1, 2},
        frozenset({"a"}),
        {"a": 1, "b": [None]},
        {1: "x", (2, 3): "y"},
        {"$weird": 1},
        {frozenset({1}): {(1, 2)}},
        3 + 4j,
        [float("inf"), float("-inf")],
    ],
    ids=lambda v: type(v).__name__,
)
def test_plain_roundtrip_keeps_type_and_value(value: object) -> None:
    back = wire.loads_plain(wire.dumps_plain(value))
    assert back == value
    assert type(back) is type(value)


def test_nan_roundtrips() -> None:
    assert math.isnan(wire.loads_plain(wire.dumps_plain(float("nan"))))


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True


class SneakyInt(int):
    def __eq__(self, other: object) -> bool:
        return True


class SneakyStr(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        AlwaysEqual(),
        SneakyInt(3),
        SneakyStr("x"),
        [SneakyInt(1)],
        {"k": AlwaysEqual()},
        {SneakyStr("k"): 1},
        object(),
        print,
        type,
    ],
)
def test_non_plain_values_are_refused(value: object) -> None:
    with pytest.raises(wire.Unserialisable):
        wire.dumps_plain(value)


def test_cycles_depth_and_size_are_bounded() -> None:
    a: list[object] = []
    a.append(a)
    with pytest.raises(wire.Unserialisable, match="cycle"):
        wire.dumps_plain(a)
    deep: list[object] = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(wire.Unserialisable, match="deep"):
        wire.dumps_plain(deep)
    with pytest.raises(wire.Unserialisable, match="too large"):
        wire.dumps_plain("x" * 5000, max_bytes=1000)
    with pytest.raises(wire.Unserialisable, match="too large"):
        wire.dumps_plain(list(range(10**6)), max_bytes=10_000)


@pytest.mark.parametrize(
    "text",
    [
        '{"$eval": "1"}',
        '{"$set": [[1]]}',
        '{"$tuple": 3}',
        '{"$a": 1, "b": 2}',
        "[1,",
        "NaN",
        '{"$complex": [1, 2]}',
        '{"$bytes": "!!"}',
        "[" * 500 + "]" * 500,
    ],
)
def test_decoder_rejects_malformed_data(text: str) -> None:
    with pytest.raises(wire.Unserialisable):
        wire.loads_plain(text)


M61 = 2**61 - 1  # hash(i * M61) == 0 for every int i


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"$set": [i * M61 for i in range(wire.MAX_SAME_HASH + 1)]}),
        json.dumps({"$frozenset": [i * M61 for i in range(wire.MAX_SAME_HASH + 1)]}),
        json.dumps({"$dict": [[i * M61, 0] for i in range(wire.MAX_SAME_HASH + 1)]}),
        json.dumps({"$set": [{"$tuple": [i * M61]} for i in range(wire.MAX_SAME_HASH + 1)]}),
        json.dumps({"$set": [7] * (wire.MAX_SAME_HASH + 1)}),  # a real set has no duplicates
    ],
    ids=["set", "frozenset", "dict", "tuples", "duplicates"],
)
def test_hash_flooded_sets_and_dicts_are_refused_before_they_are_built(text: str) -> None:
    with pytest.raises(wire.Unserialisable, match="hash flooding"):
        wire.loads_plain(text)


def test_a_few_hash_coincidences_are_still_plain_data() -> None:
    value = {i * M61 for i in range(wire.MAX_SAME_HASH)} | set(range(1, 1000))
    assert wire.loads_plain(wire.dumps_plain(value)) == value
    keyed = {(i * M61,): i for i in range(wire.MAX_SAME_HASH)}
    assert wire.loads_plain(wire.dumps_plain(keyed)) == keyed


def test_the_flood_check_hashes_each_element_once() -> None:
    calls = []

    class Counted(int):
        def __hash__(self) -> int:
            calls.append(1)
            return 0 if self > 5 else int(self)

    items = [Counted(i) for i in range(20)]
    with pytest.raises(wire.Unserialisable, match="hash flooding"):
        wire.unflooded(items)
    assert len(calls) <= 6 + wire.MAX_SAME_HASH + 1  # stopped at the first bucket over cap
    assert wire.unflooded(items[:10]) == items[:10]


def test_decoding_is_capped_in_size_element_count_and_depth() -> None:
    text = json.dumps(list(range(1000)))
    assert wire.loads_plain(text, max_items=1001) == list(range(1000))
    with pytest.raises(wire.Unserialisable, match="too many elements"):
        wire.loads_plain(text, max_items=1000)
    with pytest.raises(wire.Unserialisable, match="byte cap"):
        wire.loads_plain(text, max_bytes=len(text) - 1)
    deep = "[" * (wire.MAX_DEPTH + 5) + "]" * (wire.MAX_DEPTH + 5)
    with pytest.raises(wire.Unserialisable, match="deep"):
        wire.loads_plain(deep)
    n = wire.MAX_DEPTH + 5
    tagged = '{"$tuple": [' * n + "]}" * n  # shallow enough for JSON, too deep for us
    with pytest.raises(wire.Unserialisable, match="deep"):
        wire.loads_plain(tagged)


def test_decoded_values_are_fresh_builtins() -> None:
    back = wire.loads_plain(wire.dumps_plain({"a": (1, 2)}))
    assert type(back["a"]) is tuple and all(type(x) is int for x in back["a"])


def test_frames_roundtrip_and_stream_incrementally() -> None:
    blobs = [b"", b"\x00" * 70000, os.urandom(100)]
    data = wire.pack_frame({"op": "x", "n": [1, 2]}, blobs) * 3
    reader = wire.FrameReader()
    frames = []
    for i in range(0, len(data), 777):
        frames += reader.feed(data[i : i + 777])
    assert len(frames) == 3 and reader.pending == 0
    for hdr, got in frames:
        assert hdr == {"op": "x", "n": [1, 2]} and got == blobs


def test_oversized_or_garbage_frames_are_refused() -> None:
    reader = wire.FrameReader(max_frame=100)
    with pytest.raises(wire.FrameError):
        reader.feed(wire.pack_frame({"x": "y" * 200}))
    with pytest.raises(wire.FrameError):
        wire.FrameReader().feed(b"\x00\x00\x00\x06\x00\x00\x00\x02{x")
    r, w = os.pipe()
    os.write(w, b"\x00\x00")
    os.close(w)
    with pytest.raises(wire.FrameError):
        wire.read_frame(r)
    os.close(r)


def test_read_frame_times_out() -> None:
    import time

    r, w = os.pipe()
    t = time.monotonic()
    with pytest.raises(TimeoutError):
        wire.read_frame(r, deadline=time.monotonic() + 0.1)
    # it waited for the deadline, and gave up at it: the upper bound only catches a unit slip
    # (seconds read as milliseconds), a loaded machine cannot reach it
    assert 0.09 <= time.monotonic() - t < 30
    os.close(r)
    os.close(w)


def test_frame_stream_reads_small_frames_with_small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.read(fd, n)`` allocates ``n`` bytes: asking for 1 MiB to get a 100-byte reply cost
    more than the rest of a worker round trip. Frames of every size still arrive whole."""
    import socket
    import threading

    a, b = socket.socketpair()
    sizes: list[int] = []
    real_read = os.read

    def read(fd: int, n: int) -> bytes:
        if fd == b.fileno():  # (other threads of the test process read too)
            sizes.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", read)
    frames = [({"i": i}, [os.urandom(size)]) for i, size in enumerate([10, 65000, 3 << 20, 7])]

    def write() -> None:
        for h, bl in frames:
            wire.write_all(a.fileno(), wire.pack_frame(h, bl))

    writer = threading.Thread(target=write)
    writer.start()
    stream = wire.FrameStream(b.fileno())
    got = [stream.recv() for _ in frames]
    writer.join()
    a.close()
    b.close()
    assert got == frames
    assert sizes[0] <= wire.SMALL_READ and max(sizes) <= 1 << 20


def test_unpack_frame_takes_exactly_one_whole_frame() -> None:
    frame = wire.pack_frame({"cmd": "spawn"}, [b"x"])
    assert wire.unpack_frame(frame) == ({"cmd": "spawn"}, [b"x"])
    for bad in (frame[:-1], frame + b"\x00", b"", b'{"cmd": "spawn"}'):
        with pytest.raises(wire.FrameError):
            wire.unpack_frame(bad)
