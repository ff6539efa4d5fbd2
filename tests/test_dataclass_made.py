"""The dataclasses made without their ``__init__`` (``core.built.dataclass_made``) against the
constructor: ``StepResult.make``, ``episode_context``'s ``EpisodeContext``, the chat
reader's ``CapturedTurn`` and the runner's ``Job`` are each the instance the constructor
makes (the same ``__dict__``, key order and value identity included, equal, hashing alike
where the class hashes), and ``StepResult.make`` refuses what the constructor refuses."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.env import StepResult
from gymforge.core.policy import EpisodeContext, ScriptedContext, episode_context
from gymforge.core.tokens import ApproxTokenCounter
from gymforge.core.types import Observation, Reply
from gymforge.envs.math.env import MathEnv
from gymforge.rollout.capture import CapturedTurn, captured_turn
from gymforge.rollout.jobs import Job, epoch_jobs, expand
from gymforge.rollout.parsing import ParsedTurn, parse_assistant_message
from gymforge.rollout.scripted import OraclePolicy


def same(got: Any, want: Any, identical: bool = True) -> None:
    """``identical``: each value the very object the constructor holds (both were given the
    same objects), else of the same type."""
    assert type(got) is type(want)
    assert list(got.__dict__.items()) == list(want.__dict__.items())
    pairs = list(zip(got.__dict__.values(), want.__dict__.values(), strict=True))
    assert all(a is b if identical else type(a) is type(b) for a, b in pairs)
    assert got == want and repr(got) == repr(want)


def _fresh(made: Any) -> Any:
    """The constructor's instance of ``made``'s fields."""
    return type(made)(**{f.name: getattr(made, f.name) for f in dataclasses.fields(made)})


class Counted(dict):  # type: ignore[type-arg]
    """A ``dict`` subclass: the constructor's path."""


_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5)
_COMPONENTS = st.dictionaries(st.text(max_size=2), _FLOATS, max_size=3)
_OBS = Observation(messages=())


@given(
    components=_COMPONENTS | _COMPONENTS.map(Counted),
    ends=st.tuples(st.booleans() | st.integers(0, 1) | st.none(), st.booleans()),
    info=st.none() | st.just({}) | st.just({"a": 1}),
    timing=st.none() | st.just({}) | st.just({"step_ms": 1.0}),
)
def test_step_result_make_is_the_constructor(
    components: dict[str, float], ends: tuple[Any, bool], info: Any, timing: Any
) -> None:
    terminated, truncated = ends
    kw: dict[str, Any] = dict(terminated=terminated, truncated=truncated, info=info, timing=timing)
    try:
        total = math.fsum(components.values())
        want = StepResult(
            _OBS, total, dict(components), terminated, truncated, info or {}, timing or {}
        )
    except ValueError as err:
        with pytest.raises(type(err), match=str(err)[:20].replace("+", r"\+")):
            StepResult.make(_OBS, components, **kw)
        return
    got = StepResult.make(_OBS, components, **kw)
    assert type(got) is StepResult
    assert list(got.__dict__) == list(want.__dict__)
    assert got.reward_components == want.reward_components
    assert got.reward_components is not components  # a copy, as the constructor's
    assert (got.observation, got.terminated, got.truncated) == (_OBS, terminated, truncated)
    assert (got.info, got.timing) == (want.info, want.timing)
    assert got.reward == want.reward or (math.isnan(got.reward) and math.isnan(want.reward))
    if info:
        assert got.info is info
    same(got, _fresh(got))


def test_step_result_make_of_a_subclass_is_its_constructor() -> None:
    @dataclasses.dataclass(frozen=True)
    class Marked(StepResult):
        mark: int = 0

        def __post_init__(self) -> None:
            super().__post_init__()
            object.__setattr__(self, "mark", 7)

    got = Marked.make(_OBS, {"task": 1.0}, terminated=True)
    assert type(got) is Marked and got.mark == 7


def test_a_step_both_ended_is_refused_as_ever() -> None:
    with pytest.raises(ValueError, match="both terminated and truncated"):
        StepResult.make(_OBS, {"task": 1.0}, terminated=True, truncated=True)
    with pytest.raises(ValueError, match="sum of components"):
        StepResult.make(_OBS, {"task": math.nan})


@pytest.mark.parametrize("seeds", [(0, 0, 0), (2**70, 3, 9)])
def test_episode_context_is_the_constructor(seeds: tuple[int, int, int]) -> None:
    env = MathEnv()
    seed, sampling_seed, rollout = seeds
    got = episode_context(
        object(), env, "math.arith/v2/d1/s1", seed, sampling_seed=sampling_seed, rollout=rollout
    )
    want = EpisodeContext(
        "math.arith/v2/d1/s1",
        seed,
        sampling_seed=sampling_seed,
        rollout=rollout,
        max_tokens=env.budget.max_tokens,
        token_counter=env.token_counter,
    )
    same(got, want)
    assert hash(got) == hash(want)
    scripted = episode_context(OraclePolicy(), env, "t", 1)
    assert type(scripted) is ScriptedContext and scripted.env is env
    bare = episode_context(object(), object(), "t", 1)  # no budget, no counter
    same(bare, EpisodeContext("t", 1))
    assert isinstance(env.token_counter, ApproxTokenCounter)


@given(
    text=st.none() | st.text(max_size=3),
    calls=st.none() | st.just([{"id": "c"}]),
    ids=st.tuples(
        st.none() | st.lists(st.integers(0, 9), max_size=2),
        st.none() | st.lists(st.integers(0, 9), max_size=2),
        st.none() | st.lists(st.floats(-3, 0), max_size=2),
    ),
    tail=st.tuples(st.none() | st.just("stop"), st.none() | st.just("m"), st.none() | st.just("7")),
)
def test_captured_turn_is_the_constructor(
    text: Any, calls: Any, ids: tuple[Any, Any, Any], tail: tuple[Any, Any, Any]
) -> None:
    action = Reply(text=text or "")
    finish, model, version = tail
    got = captured_turn(action, "tokens", text, calls, ids, finish, model, version)
    want = CapturedTurn(
        action,
        "tokens",
        text,
        tool_calls=calls,
        prompt_token_ids=ids[0],
        completion_token_ids=ids[1],
        logprobs=ids[2],
        finish_reason=finish,
        model=model,
        weight_version=version,
    )
    same(got, want)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.text = "changed"  # type: ignore[misc]


def test_jobs_are_the_constructors() -> None:
    pairs = [("a", 1), ("b", 2**65)]
    for got, want in zip(
        expand(pairs, 3),
        [Job(i * 3 + r, t, s, r) for i, (t, s) in enumerate(pairs) for r in range(3)],
        strict=True,
    ):
        same(got, want, identical=False)
        assert hash(got) == hash(want) and got.key == want.key
    for got, want in zip(
        epoch_jobs(["a", "b"], 5, 2, 2),
        [
            Job(e * 4 + i * 2 + r, t, 5, e * 2 + r)
            for e in range(2)
            for i, t in enumerate("ab")
            for r in range(2)
        ],
        strict=True,
    ):
        same(got, want, identical=False)


@given(content=st.none() | st.text(max_size=4) | st.just("<tool_call>x"), text_calls=st.booleans())
def test_a_parsed_reply_is_the_constructors(content: Any, text_calls: bool) -> None:
    got = parse_assistant_message({"content": content}, "call_1", text_tool_calls=text_calls)
    want = ParsedTurn(got.action, {"role": "assistant", "content": content or ""})
    same(got, want, identical=False)
    assert got.assistant_message == want.assistant_message
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.action = got.action  # type: ignore[misc]
