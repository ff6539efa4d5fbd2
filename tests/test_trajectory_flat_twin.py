"""The episode record's msgspec twin (``trajectory.flat_twin``) accepts nothing the pydantic
twin and the models refuse and returns their dump, so the writer, which validates episode
records through it, writes and refuses as the model path: generated episode records (fields
dropped, retyped, added), numbers at the edges of the int and float ranges, patterns with a
final newline, unknown keys, text where numbers belong."""

from __future__ import annotations

import copy
import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gymforge.trajectory import episode_encoding, fast_json, flat_twin, twin
from gymforge.trajectory.same_json import same_json
from gymforge.trajectory.schema import LINE_ADAPTER
from tests.budget import examples
from tests.test_trajectory_same_json import KEY, _episode
from tests.test_trajectory_twin import _model_outcome, _mutated, _outcome

pytestmark = pytest.mark.skipif(fast_json.orjson is None, reason="orjson not installed")


def test_the_flat_twin_is_live() -> None:
    """The episode record is flat; a field the flat twin cannot mirror turns it off, and
    this test says so."""
    assert set(flat_twin.FLAT) == {"episode"}


def _check_text(raw: bytes) -> None:
    """Where the flat twin answers for ``raw``, the pydantic twin and the models do, alike."""
    try:
        flat = flat_twin.FLAT["episode"].decode(raw)
    except msgspec.ValidationError:
        return
    assert twin.TWIN is not None
    assert same_json(flat, twin.TWIN.validate_json(raw))
    dump = LINE_ADAPTER.validate_json(raw).model_dump(mode="json")  # must not raise
    if "seal" not in flat:
        assert dump.pop("seal") is None
    assert same_json(flat, dump)


_EDGES = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.integers(2**53 - 3, 2**53 + 3),
    st.integers(2**63 - 2048, 2**63 + 2048),
    st.integers(2**64 - 4096, 2**64 - 1),
    st.floats(),
    st.sampled_from([0, -0.0, 1.0, 10.0, True, False, None, "1", "true", "", "a" * 64]),
    st.sampled_from(["a" * 64 + "\n", "\n" + "a" * 64, "A" * 64, "0" * 63, "f" * 65, [], {}]),
    st.dictionaries(st.text(max_size=2), st.one_of(st.integers(), st.floats(), st.text())),
)


@examples(1500)
def test_the_flat_twin_accepts_only_what_the_models_accept_and_gives_their_dump(
    examples: int,
) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from(sorted(_episode(random.Random(1))[1])), _EDGES)))
    def check(changes: list[tuple[str, Any]]) -> None:
        end = _episode(random.Random(1))[1]
        for name, value in changes:
            end[name] = value
        raw = fast_json.orjson_bytes({**end, "digest": "0" * 64})
        if raw is not None:
            _check_text(raw)

    check()


@examples(1500)
def test_episode_records_are_written_and_refused_as_the_model_path(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_mutated(), st.sampled_from([None, KEY]))
    def check(records: list[dict[str, Any]], key: bytes | None) -> None:
        with pytest.MonkeyPatch.context() as monkeypatch:
            assert _outcome(records, key) == _model_outcome(records, key, monkeypatch)
            monkeypatch.setattr(episode_encoding, "FLAT", {})  # the pydantic twin alike
            assert _outcome(records, key) == _model_outcome(records, key, monkeypatch)

    check()


_ODD = {
    "a seal ending in a newline": ("seal", "a" * 64 + "\n"),
    "a seal of its own": ("seal", "e" * 64),
    "an int reward": ("reward", 3),
    "an int reward past 2**53": ("reward", 2**53 + 1),
    "an int reward past 2**63": ("reward", 2**63 + 1025),
    "the largest int orjson writes": ("timestamp", 2**64 - 1),
    "a float token count": ("tokens", 10.0),
    "an int as success": ("success", 1),
    "a text as terminated": ("terminated", "true"),
    "a reward component as text": ("reward_components", {"task": "1"}),
    "an int reward component": ("reward_components", {"task": 1}),
    "negative steps": ("steps", -1),
    "an unknown split": ("split", "validation"),
    "an unknown key": ("surprise", 1),
    "a record kind that is a list": ("record", ["episode"]),
    "a NaN reward": ("reward", float("nan")),
    "a NaN timing": ("timing", {"x": float("nan")}),
    "-0.0 as the reward": ("reward", -0.0),
    "a None failure reason": ("failure_reason", None),
    "a lone surrogate": ("failure_reason", "a\ud800"),
}


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
@pytest.mark.parametrize("name", sorted(_ODD))
def test_odd_episode_records_are_written_or_refused_as_before(
    name: str, key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, end = _episode(random.Random(11))
    field, value = _ODD[name]
    end[field] = copy.deepcopy(value)
    assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)


def test_a_real_episode_record_takes_the_flat_twin() -> None:
    end = _episode(random.Random(2))[1]
    marked = {**end, "digest": "0" * 64}
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(twin.TWIN, "validate_json", None)  # not the pydantic twin
        fast = episode_encoding._fast_checked(marked, False)
    assert fast is not None
    assert fast[0] == episode_encoding._checked(1, end, marked, False)[0]


def test_a_model_the_flat_twin_cannot_mirror_has_none() -> None:
    class Checked(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int

        @field_validator("x")
        @classmethod
        def _even(cls, v: int) -> int:
            return v

    class Nested(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: Checked

    class Patterned(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: str = Field(pattern=r"^a+$")

    class Bounded(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int = Field(le=3)

    class Lax(BaseModel):
        x: int

    class Free(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: dict[str, Any]

    for model in (Checked, Nested, Patterned, Bounded, Lax, Free):
        with pytest.raises(twin.Unsupported):
            flat_twin.flat_decoder(model)


def test_the_pattern_is_the_models() -> None:
    """The flat twin's spelling of the digest pattern refuses a final newline, as the model
    does (Python's ``$`` alone would take it)."""
    end = _episode(random.Random(3))[1]
    for seal in ("a" * 64 + "\n", "a" * 64, "a" * 63 + "\n"):
        raw = fast_json.orjson_bytes({**end, "digest": "0" * 64, "seal": seal})
        assert raw is not None
        flat_ok = twin_ok = True
        try:
            flat_twin.FLAT["episode"].decode(raw)
        except msgspec.ValidationError:
            flat_ok = False
        try:
            LINE_ADAPTER.validate_json(raw)
        except ValidationError:
            twin_ok = False
        assert flat_ok == twin_ok == (seal == "a" * 64)
