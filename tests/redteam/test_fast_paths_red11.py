"""Red team (red11): the rollout path's and the writer's fast paths against their references.

Each test feeds a fast path what a policy optimised against the reward, or a hostile
environment or policy author, could feed it, and holds it equal to the reference path (the
constructor, ``model_dump``, the model path of the writer, the whole-text brace match):
the same value, the same fields set, the same error, the same line.
"""

from __future__ import annotations

import copy
import json
import math
import random
import threading
from typing import Any

import pytest

from gymforge.core.env import StepResult
from gymforge.core.types import Message, Observation, Reply
from gymforge.core.verdict import Verdict
from gymforge.kit.made import observation_of, reply_of
from gymforge.kit.turns import verdict_json
from gymforge.rollout import server_http
from gymforge.rollout.jobs import episode_keys
from gymforge.tasks import draws
from gymforge.trajectory import episode_encoding, fast_json, strict_twin
from gymforge.trajectory.line_encoding import (
    DIGEST_PLACEHOLDER,
    _encode_parts,
    encode_line,
)
from gymforge.trajectory.schema import EpisodeKeys
from gymforge.verify.math.extract import boxed_contents
from tests.test_trajectory_same_json import KEY, _episode
from tests.test_trajectory_twin import _outcome
from tests.verify.test_math_extract import _boxed_by_the_whole_map

OBS = Observation(messages=())


def _outcome_of(make: Any) -> tuple[str, Any]:
    try:
        return "ok", make()
    except Exception as err:  # the error's kind and text are part of the outcome
        return type(err).__name__, str(err)


# --- StepResult.make -----------------------------------------------------------------------


class _Drifting(int):
    """A component whose float value changes every time it is read."""

    reads = 0

    def __float__(self) -> float:
        type(self).reads += 1
        return float(type(self).reads)


def _reference_make(components: dict[str, Any], **kw: Any) -> StepResult:
    """``StepResult.make`` as 0a84d2a had it: the constructor, which checks the sum."""
    return StepResult(
        OBS,
        math.fsum(components.values()),
        dict(components),
        kw.get("terminated", False),
        kw.get("truncated", False),
        kw.get("info") or {},
        kw.get("timing") or {},
    )


def test_make_refuses_a_component_whose_value_drifts_between_reads() -> None:
    """A component read as 1.0 for the reward and 2.0 by the check: the constructor refuses
    the result (the reward is not the sum of its components); ``make`` must too, not record
    a reward of 1.0 beside a component that now sums to something else."""
    _Drifting.reads = 0
    ref = _outcome_of(lambda: _reference_make({"task": _Drifting(0)}))
    _Drifting.reads = 0
    fast = _outcome_of(lambda: StepResult.make(OBS, {"task": _Drifting(0)}))
    assert ref[0] == "ValueError"
    assert fast == ref


@pytest.mark.parametrize(
    "components,kw",
    [
        ({"a": float("nan")}, {}),
        ({"a": float("inf")}, {}),
        ({"a": float("inf"), "b": 1.0}, {}),
        ({"a": -0.0}, {}),
        ({"a": 1, "b": 0.5}, {}),
        ({"a": True}, {}),
        ({"a": 10**400}, {}),
        ({"a": 1.0}, {"terminated": True, "truncated": True}),
        ({"a": 1.0}, {"terminated": 1, "truncated": [0]}),
        ({"a": 1.0}, {"terminated": "", "truncated": "x"}),
        ({"a": 1.0}, {"info": {}, "timing": None}),
        ({}, {}),
    ],
)
def test_make_equals_the_constructor(components: dict[str, Any], kw: dict[str, Any]) -> None:
    ref = _outcome_of(lambda: _reference_make(copy.copy(components), **kw))
    fast = _outcome_of(lambda: StepResult.make(OBS, copy.copy(components), **kw))
    assert fast[0] == ref[0]
    if ref[0] == "ok":
        assert repr(fast[1]) == repr(ref[1])
        assert fast[1].reward_components is not components
    else:
        assert fast[1] == ref[1]


def test_make_with_a_dict_subclass_takes_the_constructor() -> None:
    class Lying(dict):  # type: ignore[type-arg]
        def values(self) -> Any:
            return [5.0]

    want = _outcome_of(lambda: _reference_make(Lying(a=1.0)))
    assert want[0] == "ValueError"  # its values() lie: the copy's sum is another
    assert _outcome_of(lambda: StepResult.make(OBS, Lying(a=1.0))) == want


# --- episode_keys ----------------------------------------------------------------------------


class _S(str):
    pass


class _I(int):
    pass


_TEXTS = ("r", "r-000001", "e", "1.0.0", "1", "ckpt")


@pytest.mark.parametrize(
    "task_id,texts,numbers,weight",
    [
        ("t", _TEXTS, (1, 0, 2), None),
        ("t", _TEXTS, (1, -1, 2), None),  # a negative rollout: refused
        ("t", _TEXTS, (True, 0, 2), "w"),  # a bool seed: pydantic's reading of it
        ("t", _TEXTS, (_I(5), _I(1), 2), None),  # int subclasses: validated
        (_S("t"), _TEXTS, (1, 0, 2), _S("w")),
        ("t", (*_TEXTS[:5], 3), (1, 0, 2), None),  # an int checkpoint: refused
        ("t", _TEXTS, (1, 0, None), None),  # no sampling seed
        ("t", _TEXTS, (2**70, 0, -(2**70)), None),
    ],
)
def test_episode_keys_equal_the_constructor(
    task_id: Any, texts: Any, numbers: Any, weight: Any
) -> None:
    names = ("run_id", "episode_id", "env_id", "env_version", "renderer_version")
    kw = dict(zip((*names, "policy_checkpoint"), texts, strict=True))
    seed, rollout, sampling = numbers

    def ref() -> EpisodeKeys:
        return EpisodeKeys(
            task_id=task_id,
            seed=seed,
            rollout=rollout,
            sampling_seed=sampling,
            weight_version=weight,
            **kw,
        )

    want = _outcome_of(ref)
    got = _outcome_of(lambda: episode_keys(task_id, texts, numbers, weight))
    assert got[0] == want[0]
    if want[0] == "ok":
        a, b = got[1], want[1]
        assert a == b and a.model_fields_set == b.model_fields_set
        assert [type(v) for v in vars(a).values()] == [type(v) for v in vars(b).values()]
        assert a.model_dump_json() == b.model_dump_json()


# --- kit/made --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    ["plain", "caf\u00e9", "\ud800 lone", "a\udfffb\ud83d", "\x00\u2028", _S("sub\ud800")],
)
def test_made_models_scrub_as_validation_does(content: str) -> None:
    for fast, ref in (
        (
            lambda: Message(role="user", content=content),
            lambda: Message.model_validate({"role": "user", "content": content}),
        ),
        (lambda: reply_of(content), lambda: Reply(text=content)),
    ):
        a, b = fast(), ref()
        assert a == b and a.model_fields_set == b.model_fields_set
        assert a.model_dump_json() == b.model_dump_json()  # no lone surrogate survives
        assert [type(v) for v in vars(a).values()] == [type(v) for v in vars(b).values()]


@pytest.mark.parametrize(
    "args",
    [
        ((), {"a": 1}, (), 0, "t", False),
        ((), {"a": float("nan")}, ({"type": "function"},), 3, "t", True),
        ((), {_S("k"): 1}, (), 0, "t", False),
        ((), {"a": 1}, (), True, "t", False),  # a bool token count
        ((), {"a": 1}, (), 0, "t", 1),  # an int for a bool
        ((), {1: 1}, (), 0, "t", False),  # a key that is not a string: refused
        ((Reply(text="x"),), {}, (), 0, "t", False),  # not a Message: refused
        ([], {}, [], 0, "t", False),  # lists for tuples
    ],
)
def test_observation_of_equals_the_constructor(args: tuple[Any, ...]) -> None:
    names = ("messages", "data", "tools", "tokens", "tokenizer", "tokens_exact")
    want = _outcome_of(lambda: Observation(**dict(zip(names, args, strict=True))))
    got = _outcome_of(lambda: observation_of(*args))
    assert got[0] == want[0]
    if want[0] == "ok":
        a, b = got[1], want[1]
        assert repr(a) == repr(b) and a.model_fields_set == b.model_fields_set
        assert a.data is not args[1]


# --- verdict_json ----------------------------------------------------------------------------


class _Sub(Verdict):
    pass


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic's, on the constructed ones
@pytest.mark.parametrize(
    "verdict",
    [
        Verdict(passed=True, score=-0.0, facts={"x": -0.0, "n": 10**30, "s": "\ud800"}),
        Verdict(passed=False, score=None, facts={"nested": {"a": [1.5, float("nan")]}}),
        Verdict(passed=True, facts={"s": _S("lie"), "i": _I(3)}),
        Verdict(passed=True, facts={"f": float("inf")}),
        Verdict.model_construct(passed=1, score=float("nan"), reason=3, facts={}, verifier="v"),
        Verdict.model_construct(passed=True, score=2, reason=None, facts={1: 2}, verifier="v"),
        _Sub(passed=True, facts={"a": 1}),
        Verdict(passed=True, reason=_S("r"), facts={"a": 1e-7, "b": 1e16}),
    ],
)
def test_verdict_json_equals_the_dump(verdict: Verdict) -> None:
    want = _outcome_of(lambda: verdict.model_dump(mode="json"))
    got = _outcome_of(lambda: verdict_json(verdict))
    assert got[0] == want[0]
    if want[0] == "ok":
        assert repr(got[1]) == repr(want[1])
        assert [type(v) for v in got[1]["facts"].values()] == [
            type(v) for v in want[1]["facts"].values()
        ]
        assert got[1]["facts"] is not verdict.facts


# --- encode_body -----------------------------------------------------------------------------


def _body(value: Any) -> tuple[str, Any]:
    return _outcome_of(lambda: server_http.encode_body(value))


def _reference_body(value: Any) -> tuple[str, Any]:
    return _outcome_of(lambda: server_http._BODY.encode(value).encode())


def test_encode_body_after_failures_and_reentry() -> None:
    """A circular body, a body ``json`` refuses, a NaN and a too-deep body each raise as
    ``_BODY.encode`` does, and leave no marker behind: the same body then encodes, twice;
    a dict subclass whose ``items`` encodes a body itself gets the reference's bytes."""
    circular: dict[str, Any] = {"a": [1]}
    circular["a"].append(circular)
    deep: Any = {}
    for _ in range(100_000):
        deep = {"d": [deep]}

    class Reentrant(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            server_http.encode_body({"inner": [1, 2]})
            return super().items()

    shared = [1.5]
    cases = [
        circular,
        {"a": object()},
        {"a": float("nan")},
        {"a": {1: 2, None: "x", 1.5: True}},
        {"a": Reentrant(b=1)},
        {"shared": [shared, shared], "again": shared},
        {"t": "\ud800\u2028\u00e9"},
        deep,
    ]
    for case in cases * 2:
        got, want = _body(case), _reference_body(case)
        assert got[0] == want[0], case if case is not deep else "deep"
        if want[0] == "ok":
            assert got == want
    assert not server_http._REUSED.markers
    assert server_http.encode_body({"a": shared, "b": shared}) == b'{"a":[1.5],"b":[1.5]}'


def test_encode_body_in_threads() -> None:
    results: list[bool] = []

    def work(n: int) -> None:
        ok = True
        for i in range(200):
            body = {"n": n, "i": i, "xs": [n] * (i % 7), "bad": float("nan") if i % 5 else 1}
            ok &= _body(body) == _reference_body(body)
        results.append(ok)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


# --- draws -----------------------------------------------------------------------------------


def _last(n: int) -> int:
    return n - 1


def test_draws_honour_an_instance_randbelow() -> None:
    """``random.Random.randint`` and ``choice`` draw through ``self._randbelow``; a generator
    whose instance carries its own (an author's patched source of draws) is drawn from as
    the reference draws from it, as 0a84d2a's fast path also did."""
    for fn, ref in (
        (lambda r: draws.randint(r, 1, 100), lambda r: r.randint(1, 100)),
        (lambda r: draws.choice(r, [1, 2, 3]), lambda r: r.choice([1, 2, 3])),
    ):
        a, b = random.Random(3), random.Random(3)
        a._randbelow = b._randbelow = _last  # type: ignore[attr-defined]
        assert [fn(a) for _ in range(5)] == [ref(b) for _ in range(5)]


def test_draws_equal_the_methods_at_the_edges() -> None:
    a, b = random.Random(11), random.Random(11)
    for lo, hi in ((0, 0), (-5, 5), (True, 3), (0, 2**70), (-(2**64), 2**64), (2**63, 2**63 + 1)):
        assert draws.randint(a, lo, hi) == b.randint(lo, hi)
    for seq in ([0], (1, 2), list(range(2**10 + 1)), "abc", range(7)):
        assert draws.choice(a, seq) == b.choice(seq)
    with pytest.raises(ValueError):
        draws.randint(a, 3, 2)
    with pytest.raises(IndexError):
        draws.choice(a, [])
    assert a.getstate() == b.getstate()


# --- boxed_contents --------------------------------------------------------------------------


_reference_boxes = _boxed_by_the_whole_map  # 0a84d2a's boxed_contents


_CRAFTED = [
    r"\boxed{\{}5} \boxed{7}",
    r"\boxed{1\}} \boxed{2}",
    r"\boxed{1\\}2} \boxed{3}",
    r"\boxed{\\{}} \boxed{4}",
    r"\boxed{ \boxed{9} } \boxed{ 8",
    r"\boxed{a \boxed{b} \fbox{c}} \fbox{d}",
    r"\boxed{{} \boxed{6}",
    r"\boxed{{{} \boxed{6} \boxed{7}",
    r"\boxed{}} \boxed{5}}",
    r"\boxed {\frac{1}{2}} \boxed 3 \boxed{\}",
    r"\fbox{\\\{} \boxed{2}",
    r"\boxedx{1} \boxed{2} \fbox",
    "\\boxed\t{x}\\boxed{",
]


def test_boxes_equal_the_whole_match_on_crafted_answers() -> None:
    for text in _CRAFTED:
        assert boxed_contents(text) == _reference_boxes(text), text


def test_boxes_equal_the_whole_match_on_random_answers() -> None:
    rng = random.Random(1111)
    atoms = ["\\boxed", "\\fbox", "{", "}", "\\", "\\{", "\\}", "\\\\", " ", "x", "1", "\t"]
    for _ in range(4000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randrange(1, 24)))
        assert boxed_contents(text) == _reference_boxes(text), text


# --- the writer ------------------------------------------------------------------------------


def _episode_with(**change: Any) -> list[dict[str, Any]]:
    records = _episode(random.Random(5))
    records[1].update(change)
    return records


def _model_path(records: list[dict[str, Any]], key: bytes | None, mp: Any) -> Any:
    with mp.context() as m:
        m.setattr(episode_encoding, "TWIN", None)
        m.setattr(episode_encoding, "STRICT", None)
        return _outcome(records, key)


@pytest.mark.parametrize(
    "change",
    [
        {"steps": True},
        {"success": 1},
        {"terminated": 0.0},
        {"difficulty": 1.0},
        {"reward": True},
        {"reward_components": {"task": True}},
        {"timing": {"x": 1}},
        {"timing": {"x": 2**64 - 1}},
        {"tokens": 2**63},
        {"tokens": 2**64},
        {"seed": -(2**63) - 1},
        {"reward": float("nan")},
        {"reward": -0.0, "reward_components": {"task": -0.0}},
        {"family": _S("f")},
        {"steps": _I(1)},
        {"failure_reason": "x\n"},
        {"split": "train\n"},
        {"unknown": 1},
        {"sampling_seed": None, "weight_version": "\ud800"},
        {"family": 'x"digest":"' + DIGEST_PLACEHOLDER + '"'},
        {"reward_components": {'"digest': 1.0, "task": 0.0}},
        {"timestamp": 1e-07, "timing": {"a": 1e-05, "b": 1e16, "c": 2.5e-5}},
        {"family": "one-third e-1 0.00001 1e-7", "failure_reason": '\\\\"1e-7'},
    ],
)
@pytest.mark.parametrize("key", [None, KEY])
def test_the_writer_equals_the_model_path(
    change: dict[str, Any], key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _episode_with(**change)
    assert _outcome(records, key) == _model_path(records, key, monkeypatch)


@pytest.mark.parametrize(
    "body",
    [
        {"record": "step", "action": {"text": '{"digest":"' + DIGEST_PLACEHOLDER + '"}'}},
        {"a": {"digest": DIGEST_PLACEHOLDER}, "z": 1},
        {"a": {'"digest': DIGEST_PLACEHOLDER}},
        {"a": {'x"digest': DIGEST_PLACEHOLDER}, "seal": "1"},
        {"a": {"seal": "f" * 64}, "z": {"digest": DIGEST_PLACEHOLDER}},
        {"digest": "stale", "seal": "stale"},
        {},
        {"a": 1},
        {"z": 1},
    ],
)
@pytest.mark.parametrize("key", [None, KEY])
def test_encode_line_equals_the_parts(body: dict[str, Any], key: bytes | None) -> None:
    previous, seal = "p" * 64, "s" * 64
    assert encode_line(previous, body, key, seal) == _encode_parts(previous, body, key, seal)


def test_canonical_text_equals_the_rewrite_by_definition() -> None:
    rng = random.Random(7)
    floats = [1e-5, 2.5e-5, 1e-7, 1.5e-9, 1e-10, 1e16, -3e-6, 0.0001, 9.99e-5, 5e-324, -0.0]
    words = ["e-", "1e-", "x1e-7", "0.0000", '"', "\\", "\\\\", '\\"', "one-third", "e"]
    for _ in range(1500):
        tree: dict[str, Any] = {}
        for i in range(rng.randrange(1, 5)):
            key = "".join(rng.choice(words) for _ in range(rng.randrange(3)))
            tree[key + str(i)] = rng.choice(
                [rng.choice(floats), "".join(rng.choice(words) for _ in range(3)), [1e-7, "e-"]]
            )
        raw = fast_json.orjson_bytes(tree)
        assert raw is not None
        text = fast_json.canonical_text(raw)
        assert text == fast_json._split_relaid(raw.decode())
        assert text == json.dumps(tree, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_the_strict_twin_is_used() -> None:
    assert "episode" in strict_twin.STRICT
    assert vars(episode_encoding)["STRICT"] is strict_twin.decoder_for
