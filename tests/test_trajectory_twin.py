"""The writer's twin schema (``trajectory.twin``) accepts nothing the schema models refuse and
returns their dump; so the writer, which validates through it, writes the lines and makes
the refusals of the model path (``TWIN`` None), byte for byte and message for message:
generated records (every field dropped, retyped, emptied, nested, added to), the usual bad
data (NaN, infinities, values JSON cannot hold, wrong types, deep nesting, ints past 64
bits, a malformed policy capture) and a real episode."""

from __future__ import annotations

import copy
import datetime
import enum
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gymforge.core.errors import IntegrityError
from gymforge.trajectory import episode_encoding, fast_json, twin
from gymforge.trajectory.episode_encoding import _checked, _fast_checked, seal_lines
from gymforge.trajectory.same_json import same_json
from gymforge.trajectory.schema import LINE_ADAPTER
from gymforge.trajectory.seal import ChainState
from tests.budget import examples
from tests.test_trajectory_same_json import KEY, _episode

pytestmark = pytest.mark.skipif(fast_json.orjson is None, reason="orjson not installed")


def _tool_call_episode() -> list[dict[str, Any]]:
    step, end = _episode(random.Random(3))
    step["action"] = {"kind": "tool_call", "name": "f", "arguments": {"a": [1, {"b": 2.5}]}}
    step["action"]["call_id"] = "call_0"
    step["policy"]["tool_calls"] = [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]
    step["tool_result"] = {"ok": True, "result": [1, "x", None]}
    return [step, end]


def _run_seal() -> dict[str, Any]:
    return {
        "record": "run_seal", "schema_version": 1, "continued": False, "previous_seal": None,
        "files": {"summary.json": "b" * 64}, "run_id": "r", "run_ids": ["r"], "episodes": 1,
        "records": 2, "config": {"env": "e"}, "key_id": "c" * 16, "timestamp": 3.5,
    }  # fmt: skip


def _bases() -> list[dict[str, Any]]:
    return [*_episode(random.Random(1)), *_tool_call_episode(), _run_seal()]


_WORDS = st.sampled_from(
    ["step", "episode", "run_seal", "reply", "tool_call", "invalid", "user", "tokens", "train",
     "hermes", "sha256:" + "a" * 64, "0" * 64, "f" * 64, "c" * 16, "", "yes", "1", "1.5"]
)  # fmt: skip
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, 1e-7, 1e16]),
    st.text(max_size=4),
    _WORDS,
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(_WORDS, st.text(max_size=3)), inner, max_size=3),
    ),
    max_leaves=8,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (dict keys and list indices)."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _places(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _places(v, (*path, i))
    return out


@st.composite
def _mutated(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A real-shaped episode (or run seal) with a few fields dropped, replaced or added."""
    records = copy.deepcopy(draw(st.sampled_from([_bases()[:2], _bases()[2:4], [_bases()[4]]])))
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(records) - 1))
        places = [p for p in _places(records[i]) if p]
        path = draw(st.sampled_from(places))
        parent = records[i]
        for part in path[:-1]:
            parent = parent[part]
        op = draw(st.sampled_from(["set", "set", "drop", "add"]))
        if op == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.one_of(_WORDS, st.text(max_size=3)))] = draw(_VALUES)
        else:
            parent[path[-1]] = draw(_VALUES)
    return records


def _outcome(records: list[dict[str, Any]], key: bytes | None) -> list[str] | str:
    try:
        return seal_lines(copy.deepcopy(records), key, ChainState())
    except IntegrityError as err:
        return f"IntegrityError: {err}"


def _model_outcome(
    records: list[dict[str, Any]], key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> list[str] | str:
    with monkeypatch.context() as m:
        m.setattr(episode_encoding, "TWIN", None)  # the model path for every record
        return _outcome(records, key)


def test_the_twin_is_live() -> None:
    """Every model validator is one the twin knows it may leave out; a new validator,
    serializer, alias or configuration turns the twin off, and this test says so."""
    assert twin.TWIN is not None


@examples(1500)
def test_the_twin_accepts_only_what_the_models_accept_and_gives_their_dump(
    examples: int,
) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_mutated())
    def check(records: list[dict[str, Any]]) -> None:
        assert twin.TWIN is not None
        for rec in records:
            raw = fast_json.orjson_bytes({**rec, "digest": "0" * 64})
            if raw is None:
                continue
            try:
                fast = twin.TWIN.validate_json(raw)
            except ValidationError:
                continue
            dump = LINE_ADAPTER.validate_json(raw).model_dump(mode="json")  # must not raise
            if "seal" not in fast:
                assert dump.pop("seal") is None
            assert same_json(fast, dump)

    check()


@examples(1500)
def test_the_writer_writes_and_refuses_as_the_model_path(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(_mutated(), st.sampled_from([None, KEY]))
    def check(records: list[dict[str, Any]], key: bytes | None) -> None:
        with pytest.MonkeyPatch.context() as monkeypatch:
            assert _outcome(records, key) == _model_outcome(records, key, monkeypatch)

    check()


@examples(500)
def test_the_fast_check_is_the_reference_check(examples: int) -> None:
    """Where ``_fast_checked`` answers, ``_checked`` gives the same text, kind and dump."""

    @settings(max_examples=examples, deadline=None)
    @given(_mutated(), st.booleans())
    def check(records: list[dict[str, Any]], slotted: bool) -> None:
        for i, rec in enumerate(records):
            marked = {**rec, "digest": "0" * 64}
            if slotted:
                marked["seal"] = "f" * 64
            fast = _fast_checked(copy.deepcopy(marked), slotted)
            if fast is None:
                continue
            text, kind, body, same = _checked(i, rec, copy.deepcopy(marked), slotted)
            assert fast[0] == (text if same else fast_json.fast_canonical(body))
            assert fast[1] == kind
            assert same_json(fast[2], body)

    check()


class _Colour(enum.Enum):
    RED = "red"


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


_BAD = {
    "nan in info": lambda s, e: s["info"].update(x=float("nan")),
    "infinity in a logprob": lambda s, e: s["policy"]["logprobs"].__setitem__(2, float("inf")),
    "-infinity as the reward": lambda s, e: s.update(reward=float("-inf")),
    "a datetime in info": lambda s, e: s["info"].update(when=datetime.datetime(2026, 1, 1)),
    "a set in the tool result": lambda s, e: s.update(tool_result={"x": {1, 2}}),
    "an object in the capture": lambda s, e: s["policy"].update(tool_calls=[object()]),
    "an enum in info": lambda s, e: s["info"].update(colour=_Colour.RED),
    "a text reward": lambda s, e: s.update(reward="high"),
    "a negative step": lambda s, e: s.update(step=-1),
    "a float step": lambda s, e: s.update(step=1.5),
    "a list as the text": lambda s, e: s["policy"].update(text=["ok"]),
    "an unknown capture level": lambda s, e: s["policy"].update(capture_level="all"),
    "an extra capture field": lambda s, e: s["policy"].update(secret="x"),
    "a fractional token id": lambda s, e: s["policy"]["prompt_token_ids"].__setitem__(0, 1.5),
    "an unknown tool format": lambda s, e: s["policy"].update(tool_format="xml"),
    "a capture that is a list": lambda s, e: s.update(policy=["tokens"]),
    "arguments nested too deep": lambda s, e: s.update(
        action={"kind": "tool_call", "name": "f", "arguments": _nested(101)}
    ),
    "a bad fingerprint": lambda s, e: s.update(state_fingerprint="sha256:xyz"),
    "a non-text key": lambda s, e: s["info"].update({1: "x"}),
    "an extra field": lambda s, e: e.update(surprise=True),
    "a missing field": lambda s, e: e.pop("success"),
    "a bad split": lambda s, e: e.update(split="validation"),
    "negative tokens": lambda s, e: e.update(tokens=-1),
    "a message of no role": lambda s, e: s["observation"]["rendered"][0].update(role="robot"),
    "a message with a list as its content": lambda s, e: s["observation"]["rendered"][0].update(
        content=[1]
    ),
}


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
@pytest.mark.parametrize("name", sorted(_BAD))
def test_bad_records_stay_refused(
    name: str, key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, end = _episode(random.Random(7))
    _BAD[name](step, end)
    with pytest.raises(IntegrityError):
        seal_lines(copy.deepcopy([step, end]), key, ChainState())
    assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)


_ODD = {  # lax validation (text to number) and JSON's unbounded ints: accepted
    "a reward component as text": lambda s, e: s.update(reward_components={"task": "1"}),
    "a text token id": lambda s, e: s["policy"]["completion_token_ids"].__setitem__(0, "7"),
    "a text logprob": lambda s, e: s["policy"]["logprobs"].__setitem__(0, "-1"),
    "an int past 64 bits": lambda s, e: s["info"].update(big=2**70),
    "a token id past 64 bits": lambda s, e: s["policy"]["prompt_token_ids"].append(2**65),
    "arguments nested deep but allowed": lambda s, e: s.update(
        action={"kind": "tool_call", "name": "f", "arguments": _nested(99)}
    ),
    "arguments nested just past the twin's reach": lambda s, e: s.update(
        action={"kind": "tool_call", "name": "f", "arguments": _nested(twin._ARGUMENTS_DEPTH + 1)}
    ),
    "an int reward": lambda s, e: s.update(reward=1),
    "a float token count": lambda s, e: e.update(tokens=10.0),
    "an int as success": lambda s, e: e.update(success=1),
    "a text as terminated": lambda s, e: s.update(terminated="true"),
    "a tuple in info": lambda s, e: s["info"].update(t=(1, 2.0)),
    "a capture without model_turns": lambda s, e: s["policy"].pop("model_turns"),
    "an observation without tools": lambda s, e: s["observation"].pop("tools"),
    "a lone surrogate in info": lambda s, e: s["info"].update(text="a\ud800b"),
    "a lone surrogate in a message": lambda s, e: s["observation"]["rendered"][0].update(
        content="a\udfffb"
    ),
    "a seal of its own": lambda s, e: s.update(seal="e" * 64),
    "tiny floats": lambda s, e: s["policy"]["logprobs"].__setitem__(
        slice(0, 3), [-1e-5, -3e-7, -0.0]
    ),
}


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
@pytest.mark.parametrize("name", sorted(_ODD))
def test_odd_records_are_written_or_refused_as_before(
    name: str, key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, end = _episode(random.Random(9))
    _ODD[name](step, end)
    assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_a_real_episode_takes_the_twin_and_writes_the_model_paths_bytes(
    key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_trajectory import episode_records

    records = episode_records("ledger.transfer/v1/d1/s3", 0)
    for rec in records:  # every record of a real episode is one the twin vouches for
        marked = {**rec, "digest": "0" * 64}
        if rec["policy"] is not None if rec["record"] == "step" else False:
            marked["policy"] = {**episode_encoding._POLICY_UNSET, **rec["policy"]}
        with monkeypatch.context() as m:  # and encodes once: the text validated is the line
            m.setattr(fast_json, "fast_canonical", None)
            assert _fast_checked(marked, False) is not None
    lines = _outcome(records, key)
    assert isinstance(lines, list)
    assert lines == _model_outcome(records, key, monkeypatch)


def test_a_model_the_twin_cannot_mirror_turns_it_off() -> None:
    """A validator, alias or configuration the twin does not know makes it refuse to
    mirror the model (``TWIN`` is then None and every record takes the model path)."""
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class Checked(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int

        @field_validator("x")
        @classmethod
        def _even(cls, v: int) -> int:
            return v

    class Aliased(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int = Field(alias="y")

    class Lax(BaseModel):
        x: int  # extra="ignore": the twin would refuse what the model accepts

    class PostInit(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int

        def model_post_init(self, context: Any) -> None:
            return None

    for model in (Checked, Aliased, Lax, PostInit):
        with pytest.raises(twin.Unsupported):
            twin._Builder().twin(model)


@pytest.mark.parametrize(
    ("field", "value", "text"),
    [("reward", 0, '"reward":0.0'), ("reward", -0.0, '"reward":-0.0'), ("step", 1, '"step":1')],
)
def test_a_converted_value_is_encoded_again(field: str, value: Any, text: str) -> None:
    """An int where the schema holds a float is equal (``==``) to the float validation
    makes of it, but not the same text: the dump's own encoding is the line."""
    records = copy.deepcopy(_bases()[:2])
    records[0][field] = value
    marked = {**records[0], "digest": "0" * 64}
    fast = _fast_checked(marked, False)
    assert fast is not None and text in fast[0]
    reference = _checked(0, records[0], marked, False)
    assert fast[0] == (reference[0] if reference[3] else fast_json.fast_canonical(reference[2]))


def test_the_number_lists_are_lifted() -> None:
    """The policy record declares its token ids and logprobs as the lift expects (else it
    would quietly stop lifting them: ``twin.LIFTABLE``)."""
    assert {
        "prompt_token_ids": int,
        "completion_token_ids": int,
        "logprobs": float,
    } == twin.LIFTABLE


class _Small(enum.IntEnum):
    ONE = 1


class _Plain(enum.Enum):
    """Not an int: ``json`` refuses it, orjson writes its value (as digits)."""

    FIVE = 5


class _Float(float):
    pass


class _SaysNumber(type):
    """A metaclass whose classes say they are ``int`` and ``float`` (a type check by
    ``==`` or by hash counts their instances as such)."""

    def __eq__(cls, other: object) -> bool:
        return other in (int, float) or other is cls

    def __hash__(cls) -> int:
        return hash(int)


class _SaysNumberEnum(_SaysNumber, enum.EnumMeta):
    pass


class _PosingEnum(enum.Enum, metaclass=_SaysNumberEnum):
    FIVE = 5
    HALF = -0.5


class _PosingInt(int, metaclass=_SaysNumber):
    pass


_NUMBERS = st.one_of(
    st.integers(-3, 300),
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN and infinities too
    st.sampled_from([0.0, -0.0, 1.0, 5e-324, 1e-7, 1e16, 1e308, True, False, None, "1"]),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), _Small.ONE, _Plain.FIVE, 2**64]),
    st.sampled_from([_Float(1.5), [1], {"a": 1}]),
)


@examples(1500)
def test_lifted_number_lists_write_and_refuse_as_the_twin_and_the_models(examples: int) -> None:
    """A step whose token ids and logprobs are exact (ints, finite floats) or not (a bool,
    an int among floats, NaN, an int past 64 bits, an enum, a subclass): checked with the
    lift as without it where the twin checks it at all (an int subclass, which orjson
    refuses, the lift copies as the int it is), and written or refused as the model path
    writes or refuses it."""

    @settings(max_examples=examples, deadline=None)
    @given(
        st.lists(st.integers(0, 2**20), max_size=6),
        st.lists(st.floats(-30.0, 0.0), max_size=6),
        st.lists(st.tuples(st.sampled_from(list(twin.LIFTABLE)), st.integers(0, 5), _NUMBERS)),
        st.sampled_from([None, KEY]),
    )
    def check(
        ids: list[int],
        logprobs: list[float],
        changes: list[tuple[str, int, Any]],
        key: bytes | None,
    ) -> None:
        step, end = _episode(random.Random(5))
        policy = step["policy"]
        policy.update(prompt_token_ids=ids, completion_token_ids=list(ids), logprobs=logprobs)
        for name, i, value in changes:
            target = policy[name]
            if target:
                target[i % len(target)] = value
            else:
                target.append(value)
        marked = {
            **step,
            "digest": "0" * 64,
            "policy": {**episode_encoding._POLICY_UNSET, **policy},
        }
        with pytest.MonkeyPatch.context() as monkeypatch:
            lifted = _fast_checked(copy.deepcopy(marked), False)
            monkeypatch.setattr(twin, "_EXACT", {})  # the lift's converters: none, no lift
            assert twin.lift_numbers(copy.deepcopy(marked)) is None
            plain = _fast_checked(copy.deepcopy(marked), False)
            assert lifted == plain or plain is None
            assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)

    check()


@pytest.mark.parametrize("value", [_PosingEnum.FIVE, _PosingEnum.HALF, _PosingInt(7)], ids=repr)
@pytest.mark.parametrize("name", sorted(twin.LIFTABLE))
@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_a_number_whose_type_says_it_is_int_or_float_is_written_as_the_models_write_it(
    key: bytes | None, name: str, value: Any
) -> None:
    """A type whose metaclass answers ``==`` to ``int`` or ``float`` (which a type check by
    ``==`` would count as exact) is no number to the lift's conversion unless it is an int
    subclass, copied as the int it is; orjson writes no instance of such a type (it writes
    exact builtins, and enums of the plain enum metaclass only), so the writer takes the
    model path for the rest: the same lines (an int subclass, which ``json`` writes as an
    int) or the same error (an enum)."""
    step, end = _episode(random.Random(5))
    policy = step["policy"]
    policy.update(prompt_token_ids=[1, 2], completion_token_ids=[3, 4], logprobs=[-0.5, -1.5])
    policy[name][1] = value
    marked = {**step, "digest": "0" * 64, "policy": {**episode_encoding._POLICY_UNSET, **policy}}
    assert twin.lift_numbers(marked) is not None  # the other lists are lifted
    with pytest.MonkeyPatch.context() as monkeypatch:
        outcome = _outcome([step, end], key)
        assert outcome == _model_outcome([step, end], key, monkeypatch)
    assert isinstance(outcome, str) == isinstance(value, enum.Enum)
