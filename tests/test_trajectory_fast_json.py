"""``fast_canonical`` (orjson plus the float layout rewrite) is ``canonical_json`` byte for
byte on every plain JSON tree: generated trees (floats of every exponent, subnormals, -0.0,
ints beside equal floats, keys and strings of any code point, strings that look like the
floats the rewrite touches) and every line of the recorded runs; and the writer, which uses
it only behind ``same_json``, still refuses what it always refused."""

from __future__ import annotations

import copy
import gzip
import json
import math
import random
import re
import struct
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.errors import IntegrityError
from gymforge.core.seeding import canonical_json
from gymforge.trajectory import fast_json
from gymforge.trajectory.episode_encoding import seal_episode, seal_lines
from gymforge.trajectory.fast_json import fast_canonical
from gymforge.trajectory.seal import ChainState
from tests.budget import examples
from tests.test_trajectory_same_json import KEY, _episode, _variants

pytestmark = pytest.mark.skipif(fast_json.orjson is None, reason="orjson not installed")

RECORDED = Path(__file__).parent / "data" / "recorded"

_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e-3, max_value=1e-3, allow_nan=False),  # the rewritten decades
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-12, 20)),
    st.integers(0, 2**64 - 1)
    .map(lambda b: struct.unpack("<d", b.to_bytes(8, "little"))[0])
    .filter(math.isfinite),  # every bit pattern: subnormals, -0.0, the largest exponents
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e16, 1e-5, 1e-7]),
)
_LOOKALIKE = st.sampled_from(
    ["0.00001", "1e-7", "-1.5e-6", ":0.00002,", "e-", '\\"', "\\", "\\\\", '"', "abc3e-000001"]
)
_TEXT = st.one_of(st.text(), st.lists(st.one_of(_LOOKALIKE, st.text(max_size=3))).map("".join))
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    _FLOATS,
    _TEXT,
)
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(_TEXT, inner, max_size=6)),
    max_leaves=40,
)


def _encodable(value: Any) -> bool:
    """The tree is one the fast path may see: no lone surrogate (neither encoder writes it
    as UTF-8; the writer's fallback handles it)."""
    try:
        canonical_json(value).encode()
    except UnicodeEncodeError:
        return False
    return True


@examples(3000)
def test_fast_canonical_is_canonical_json(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_TREES)
    def check(value: Any) -> None:
        text = fast_canonical(value)
        if not _encodable(value):
            assert text is None
            return
        assert text == canonical_json(value)

    check()


@examples(3000)
def test_float_lists(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(_FLOATS, min_size=1, max_size=50))
    def check(values: list[float]) -> None:
        assert fast_canonical({"logprobs": values, "n": 1}) == canonical_json(
            {"logprobs": values, "n": 1}
        )

    check()


def test_every_decade_and_boundary() -> None:
    """Every power of ten and the doubles either side of it, the rewrite's edges included."""
    for e in range(-324, 309):
        for x in (float(f"1e{e}"), float(f"9.999999999999999e{e}"), float(f"1.5e{e}")):
            for y in (x, math.nextafter(x, 0.0), math.nextafter(x, math.inf), -x):
                if math.isfinite(y):
                    assert fast_canonical([y]) == canonical_json([y]), y


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDED.glob("*.jsonl.gz")))
def test_recorded_lines(name: str) -> None:
    with gzip.open(RECORDED / name, "rt", encoding="utf-8") as f:
        for line in f:
            value = json.loads(line)
            assert fast_canonical(value) == canonical_json(value) == line.rstrip("\n")


def _tiny_logprobs(episode: list[dict[str, Any]]) -> list[dict[str, Any]]:
    episode[0]["policy"]["logprobs"][:4] = [-1.2e-05, -3e-07, -1e-10, -0.00015]
    return episode


@pytest.mark.parametrize("key", [None, KEY])
def test_writer_lines_unchanged(key: bytes | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every variant episode (validation changing a leaf, tuples, defaults, tiny floats)
    writes the same lines with orjson as without it."""
    rng = random.Random(5)
    episodes = [_tiny_logprobs(e) for e in _variants(rng)] + _variants(rng)
    fast = [seal_lines(copy.deepcopy(e), key, ChainState()) for e in episodes]
    monkeypatch.setattr(fast_json, "orjson", None)
    assert [seal_lines(copy.deepcopy(e), key, ChainState()) for e in episodes] == fast


@pytest.mark.parametrize(
    ("where", "bad"),
    [("info", float("nan")), ("info", float("inf")), ("logprob", float("nan"))],
)
def test_refused_values_stay_refused(where: str, bad: float) -> None:
    """orjson writes NaN and infinities as null (which the schema would accept in ``info``);
    the writer still refuses the record with the reference path's error."""
    step, end = _episode(random.Random(1))
    if where == "info":
        step["info"]["x"] = bad
    else:
        step["policy"]["logprobs"][3] = bad
    with pytest.raises(IntegrityError, match="record 0 of episode r-000001 is not JSON"):
        seal_episode([step, end])


def test_values_orjson_refuses() -> None:
    assert fast_canonical([2**70]) is None
    assert fast_canonical({1: 2}) is None
    assert fast_canonical(["\ud800"]) is None


@examples(3000)
def test_relaid_is_the_split_rewrite(examples: int) -> None:
    """The rewrite that finds its marks with ``str.find`` and counts quotes is the rewrite
    by the definition (the text split at its strings) on every text orjson writes."""

    @settings(max_examples=examples, deadline=None)
    @given(_TREES)
    def check(value: Any) -> None:
        raw = fast_json.orjson_bytes(value)
        if raw is None:
            return
        text = raw.decode()
        with mock.patch.object(fast_json, "_FEW_MARKS", 10**9):  # never the split
            assert fast_json._relaid(text) == fast_json._split_relaid(text)

    check()


@pytest.mark.parametrize(
    "value",
    [
        {"episode_id": "12ab3e-000001", "x": 1e-7},
        ["1e-7", 1e-7, "\\", 2e-6, '\\"', 3e-5, '"', 4.5e-9],
        ["a\\", 1.5e-6, "1e-7\\", 1e-7],  # a string ending in a backslash: the split decides
        [-0.00001, "x", -0.00002, {"k0.00001": 1e-8}],
        ["e-" * 50, "0.0000" * 10, 1e-9],
    ],
)
def test_relaid_cases(value: Any) -> None:
    text = fast_json.orjson_bytes(value)
    assert text is not None
    with mock.patch.object(fast_json, "_FEW_MARKS", 10**9):
        assert fast_json._relaid(text.decode()) == fast_json._split_relaid(text.decode())
    assert fast_canonical(value) == canonical_json(value)


_SPELLED_OUT = re.compile(r'("(?:[^"\\]|\\.)*")', re.DOTALL)
"""``fast_json._STRINGS`` as first written: a JSON string one character or escape at a
time."""


@examples(3000)
def test_strings_split_alike(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_TREES, st.text(alphabet='"\\ab'))
    def check(value: Any, noise: str) -> None:
        raw = fast_json.orjson_bytes(value)
        texts = [noise] + ([] if raw is None else [raw.decode(), raw.decode() + noise])
        for text in texts:
            assert fast_json._STRINGS.split(text) == _SPELLED_OUT.split(text)

    check()


@examples(1000)
@pytest.mark.parametrize("few", [0, 10**9])
def test_relaid_either_way(few: int, examples: int) -> None:
    """Past ``_FEW_MARKS`` marks the split rewrites, below them the counted quotes do:
    both are ``canonical_json``."""

    @settings(max_examples=examples, deadline=None)
    @given(_TREES)
    def check(value: Any) -> None:
        text = fast_canonical(value)
        if _encodable(value):
            assert text == canonical_json(value)

    with mock.patch.object(fast_json, "_FEW_MARKS", few):
        check()


_WORDY = st.lists(
    st.one_of(
        st.sampled_from(["one-third", "ddfe-000001", "e-", "e-7", "3e-7", "1.5e-", "-e-1", "ee-"]),
        st.sampled_from(["0.0000", "0.00001", "1e-0", "9e-9", "\\", '"', " "]),
        st.text(alphabet="0123456789e-.", max_size=4),
    )
).map("".join)
"""Texts whose ``e-`` follows a digit, a letter, a quote or nothing (ids, words, numbers
spelled out in strings)."""


@examples(3000)
def test_a_text_the_precheck_passes_needs_no_rewrite(examples: int) -> None:
    """``canonical_text`` returns the text as orjson wrote it when it holds no ``0.0000``
    and no ``e-`` right after a digit (``_exponent_mark``): then the rewrite by the
    definition changes nothing, and on every text ``canonical_text`` is that rewrite."""

    @settings(max_examples=examples, deadline=None)
    @given(st.one_of(_TREES, st.lists(st.one_of(_WORDY, _FLOATS)), st.dictionaries(_WORDY, _WORDY)))
    def check(value: Any) -> None:
        raw = fast_json.orjson_bytes(value)
        if raw is None:
            return
        text = raw.decode()
        if "0.0000" not in text and not fast_json._exponent_mark(text):
            assert fast_json._split_relaid(text) == text
        assert fast_json.canonical_text(raw) == fast_json._split_relaid(text)
        if _encodable(value):
            assert fast_canonical(value) == canonical_json(value)

    check()


@pytest.mark.parametrize(
    ("value", "marked"),
    [
        ({"episode_id": "ce290990ddfe-000001", "x": 0.5}, False),
        (["one-third", "state-of-the-art", "e-", "e-9"], False),
        ({"e-7": "-e-"}, False),
        ({"id": "ab3e-000001"}, True),  # a digit before e- in a string: _relaid decides
        ([1e-7], True),
        ([-1.5e-8, "one-third"], True),
        ([1e-10], True),  # orjson and json agree on it; the rewrite leaves it
    ],
)
def test_exponent_marks(value: Any, marked: bool) -> None:
    raw = fast_json.orjson_bytes(value)
    assert raw is not None
    assert fast_json._exponent_mark(raw.decode()) is marked
    assert fast_json.canonical_text(raw) == canonical_json(value)


def test_the_exponent_precheck_looks_past_an_e_minus_at_the_start() -> None:
    from gymforge.trajectory.fast_json import _exponent_mark

    assert _exponent_mark("e-x 1e-5") and not _exponent_mark("e-x one-third")
