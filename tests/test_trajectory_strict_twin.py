"""The step and episode records' msgspec twin (``trajectory.strict_twin``) accepts nothing the
pydantic twin and the models refuse and returns their dump, so the writer, which validates
step and episode records through it, writes and refuses as the model path: generated records
(fields dropped, retyped, added, at every level: the observation, its messages, the action of
each kind, the policy capture), numbers at the edges of the int and float ranges, patterns
with a final newline, unknown keys, text where numbers belong, actions whose tag names
another member or none."""

from __future__ import annotations

import copy
import random
from typing import Annotated, Any, Literal

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gymforge.trajectory import episode_encoding, fast_json, strict_twin, twin
from gymforge.trajectory.same_json import same_json
from gymforge.trajectory.schema import LINE_ADAPTER
from tests.budget import examples
from tests.test_trajectory_same_json import KEY, _episode
from tests.test_trajectory_twin import _bases, _model_outcome, _mutated, _outcome

pytestmark = pytest.mark.skipif(fast_json.orjson is None, reason="orjson not installed")


def test_the_strict_twin_is_live() -> None:
    """The step and episode records have strict twins, the step record one per action kind
    and one for no action; a field the twin cannot mirror turns a kind off, and this test
    says so."""
    assert set(strict_twin.STRICT) == {"step", "episode"}
    step = strict_twin.STRICT["step"]
    assert (step.field, step.discriminator) == ("action", "kind")
    assert set(step.decoders) == {None, "tool_call", "reply", "invalid"}
    assert set(strict_twin.STRICT["episode"].decoders) == {None}
    assert episode_encoding.STRICT is strict_twin.decoder_for


def _check_text(record: dict[str, Any], raw: bytes) -> bool:
    """Where the strict twin answers for ``raw`` (``record``'s text) with the record again
    (else the writer does not take its answer: it drops unknown keys), the pydantic twin
    and the models do, alike; whether it answered."""
    decoder = strict_twin.decoder_for(record)
    if decoder is None:
        return False
    try:
        strict = decoder.decode(raw)
    except msgspec.ValidationError:
        return False
    if strict != record:
        return False
    assert twin.TWIN is not None
    assert same_json(strict, twin.TWIN.validate_json(raw))
    dump = LINE_ADAPTER.validate_json(raw).model_dump(mode="json")  # must not raise
    if "seal" not in strict:
        assert dump.pop("seal") is None
    assert same_json(strict, dump)
    return True


def _marked(record: dict[str, Any]) -> dict[str, Any]:
    marked = {**record, "digest": "0" * 64}
    if type(record.get("policy")) is dict:
        marked["policy"] = {**episode_encoding._POLICY_UNSET, **record["policy"]}
    return marked


def test_real_records_take_the_strict_twin() -> None:
    for record in _bases()[:4]:
        marked = _marked(record)
        raw = fast_json.orjson_bytes(marked)
        assert raw is not None and _check_text(marked, raw), record["record"]


@examples(3000)
def test_the_strict_twin_accepts_only_what_the_models_accept_and_gives_their_dump(
    examples: int,
) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_mutated())
    def check(records: list[dict[str, Any]]) -> None:
        for record in records:
            marked = _marked(record)
            raw = fast_json.orjson_bytes(marked)
            if raw is not None:
                _check_text(marked, raw)

    check()


_EDGES = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.integers(2**53 - 3, 2**53 + 3),
    st.integers(2**63 - 2048, 2**63 + 2048),
    st.integers(2**64 - 4096, 2**64 - 1),
    st.floats(),
    st.sampled_from([0, -0.0, 1.0, 10.0, True, False, None, "1", "true", "", "a" * 64]),
    st.sampled_from(["a" * 64 + "\n", "\n" + "a" * 64, "A" * 64, "0" * 63, "f" * 65, [], {}]),
    st.sampled_from(["sha256:" + "a" * 64, "sha256:" + "a" * 64 + "\n", "\ud800", "é\u2028"]),
    st.sampled_from(["reply", "tool_call", "invalid", "user", "tokens", "hermes", "step"]),
    st.dictionaries(st.text(max_size=2), st.one_of(st.integers(), st.floats(), st.text())),
    st.lists(st.one_of(st.integers(), st.floats(), st.booleans(), st.text(max_size=2))),
)
_ACTIONS = [
    None,
    {"kind": "reply", "text": "ok"},
    {"kind": "tool_call", "name": "f", "arguments": {"a": [1, {"b": 2.5}]}, "call_id": "c"},
    {"kind": "invalid", "raw": "x", "error": "bad"},
]


def _places(record: dict[str, Any]) -> list[tuple[str, ...]]:
    """The paths to change in a step record: its fields and its nested models' fields."""
    out = [(name,) for name in record]
    for name in ("observation", "action", "policy"):
        if type(record.get(name)) is dict:
            out += [(name, field) for field in record[name]]
    out += [("observation", "rendered", "0", f) for f in ("role", "content", "name", "x")]
    return out


@examples(3000)
def test_adversarial_values_anywhere_in_a_step_record_are_judged_as_the_models_judge_them(
    examples: int,
) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.sampled_from(_ACTIONS), st.data())
    def check(action: dict[str, Any] | None, data: st.DataObject) -> None:
        step = _marked({**_episode(random.Random(1))[0], "action": copy.deepcopy(action)})
        changes = data.draw(st.lists(st.tuples(st.sampled_from(_places(step)), _EDGES)))
        for path, value in changes:
            parent: Any = step
            for part in path[:-1]:  # a parent replaced by an earlier change: none to change
                if type(parent) is list:
                    parent = parent[0] if parent and part == "0" else None
                else:
                    parent = parent.get(part) if type(parent) is dict else None
            if type(parent) is dict:
                parent[path[-1]] = value
        raw = fast_json.orjson_bytes(step)
        if raw is not None:
            _check_text(step, raw)

    check()


@pytest.mark.parametrize("kind", ["reply", "tool_call", "invalid"])
@pytest.mark.parametrize("other", _ACTIONS[1:])
def test_an_action_of_another_shape_than_its_tag_is_refused(
    kind: str, other: dict[str, Any]
) -> None:
    """The decoder picked by the tag is the member's: fields of another member are refused
    by it as by the models."""
    step = _marked({**_episode(random.Random(2))[0], "action": {**other, "kind": kind}})
    raw = fast_json.orjson_bytes(step)
    assert raw is not None
    answered = _check_text(step, raw)
    assert answered == (other["kind"] == kind)
    if not answered:
        with pytest.raises(ValidationError):
            LINE_ADAPTER.validate_json(raw)


@pytest.mark.parametrize("action", [{"kind": 1}, {"kind": "say"}, {}, ["reply"], "reply", 1])
def test_an_action_without_a_known_tag_has_no_strict_twin(action: Any) -> None:
    step = {**_episode(random.Random(3))[0], "action": action}
    assert strict_twin.decoder_for(step) is None


@examples(1500)
def test_step_and_episode_records_are_written_and_refused_as_the_model_path(
    examples: int,
) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_mutated(), st.sampled_from([None, KEY]))
    def check(records: list[dict[str, Any]], key: bytes | None) -> None:
        with pytest.MonkeyPatch.context() as monkeypatch:
            assert _outcome(records, key) == _model_outcome(records, key, monkeypatch)
            monkeypatch.setattr(episode_encoding, "STRICT", None)  # the pydantic twin alike
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
@pytest.mark.parametrize("which", [0, 1], ids=["step", "episode"])
def test_odd_records_are_written_or_refused_as_before(
    name: str, key: bytes | None, which: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _episode(random.Random(11))
    field, value = _ODD[name]
    records[which][field] = copy.deepcopy(value)
    assert _outcome(records, key) == _model_outcome(records, key, monkeypatch)


_ODD_STEPS = {
    "a fingerprint ending in a newline": ("state_fingerprint", "sha256:" + "a" * 64 + "\n"),
    "a float token count": (("observation", "tokens"), 3.0),
    "negative observation tokens": (("observation", "tokens"), -1),
    "an unknown observation key": (("observation", "surprise"), 1),
    "an unknown capture key": (("policy", "surprise"), 1),
    "an unknown action key": (("action", "surprise"), 1),
    "an int action text": (("action", "text"), 1),
    "a text tokens_exact": (("observation", "tokens_exact"), "false"),
    "an unknown capture level": (("policy", "capture_level"), "all"),
    "a None capture level": (("policy", "capture_level"), None),
    "a float in the token ids": (("policy", "prompt_token_ids"), [1, 2.0]),
    "a bool in the logprobs": (("policy", "logprobs"), [True, -1.0]),
    "ints as logprobs": (("policy", "logprobs"), [0, -1, 2**64 - 1]),
    "a tools list of lists": (("observation", "tools"), [[1]]),
    "a None action": ("action", None),
    "no policy": ("policy", None),
}


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
@pytest.mark.parametrize("name", sorted(_ODD_STEPS))
def test_odd_step_records_are_written_or_refused_as_before(
    name: str, key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _episode(random.Random(12))
    path, value = _ODD_STEPS[name]
    parent, field = (records[0], path) if type(path) is str else (records[0][path[0]], path[1])
    parent[field] = copy.deepcopy(value)
    assert _outcome(records, key) == _model_outcome(records, key, monkeypatch)


@pytest.mark.parametrize("action", _ACTIONS)
def test_a_real_step_record_takes_the_strict_twin(action: dict[str, Any] | None) -> None:
    step = _marked({**_episode(random.Random(2))[0], "action": action})
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(twin.TWIN, "validate_json", None)  # not the pydantic twin
        fast = episode_encoding._fast_checked(step, False)
    assert fast is not None
    assert fast[0] == episode_encoding._checked(0, step, step, False)[0]


def test_a_model_the_strict_twin_cannot_mirror_has_none() -> None:
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

    class Tuple(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: tuple[int, ...]

    class A(BaseModel):
        model_config = ConfigDict(extra="forbid")
        kind: Literal["a"] = "a"

    class B(BaseModel):
        model_config = ConfigDict(extra="forbid")
        kind: Literal["b", "c"] = "b"

    class Union2(BaseModel):  # a member tagged by two values
        model_config = ConfigDict(extra="forbid")
        x: Annotated[A | B, Field(discriminator="kind")]

    class Plain(BaseModel):  # a union without a discriminator
        model_config = ConfigDict(extra="forbid")
        x: A | int

    for model in (Checked, Nested, Patterned, Bounded, Lax, Tuple, Union2, Plain):
        with pytest.raises(twin.Unsupported):
            strict_twin.strict_twin(model)


def test_a_union_is_pinned_only_where_the_record_holds_it() -> None:
    class A(BaseModel):
        model_config = ConfigDict(extra="forbid")
        kind: Literal["a"] = "a"

    class B(BaseModel):
        model_config = ConfigDict(extra="forbid")
        kind: Literal["b"] = "b"
        n: int

    class Holder(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: Annotated[A | B, Field(discriminator="kind")] | None

    class Hoisted(BaseModel):  # pydantic moves the discriminator onto the field
        model_config = ConfigDict(extra="forbid")
        x: Annotated[A | B, Field(discriminator="kind")]

    class Outer(BaseModel):  # a union below the record's own fields
        model_config = ConfigDict(extra="forbid")
        h: Holder

    class Listed(BaseModel):  # a union inside the field's type
        model_config = ConfigDict(extra="forbid")
        x: list[Annotated[A | B, Field(discriminator="kind")]]

    made = strict_twin.strict_twin(Holder)
    assert set(made.decoders) == {None, "a", "b"}
    assert made.decoders["b"].decode(b'{"x":{"kind":"b","n":1}}') == {"x": {"kind": "b", "n": 1}}
    assert made.decoders[None].decode(b'{"x":null}') == {"x": None}
    for tag, raw in [("a", b'{"x":{"kind":"b","n":1}}'), (None, b'{"x":{"kind":"a"}}')]:
        with pytest.raises(msgspec.ValidationError):
            made.decoders[tag].decode(raw)
    for model in (Hoisted, Outer, Listed):
        with pytest.raises(twin.Unsupported):
            strict_twin.strict_twin(model)


@pytest.mark.parametrize("field", ["seal", "state_fingerprint"])
def test_the_patterns_are_the_models(field: str) -> None:
    """The strict twin's spelling of the digest and fingerprint patterns refuses a final
    newline, as the model does (Python's ``$`` alone would take it)."""
    step = _marked(_episode(random.Random(3))[0])
    good = ("sha256:" if field == "state_fingerprint" else "") + "a" * 64
    for value in (good + "\n", good, good[:-1] + "\n"):
        raw = fast_json.orjson_bytes({**step, field: value})
        assert raw is not None
        strict_ok = twin_ok = True
        try:
            strict_twin.STRICT["step"].decoders["reply"].decode(raw)
        except msgspec.ValidationError:
            strict_ok = False
        try:
            LINE_ADAPTER.validate_json(raw)
        except ValidationError:
            twin_ok = False
        assert strict_ok == twin_ok == (value == good)
