"""The rollout's cheaper paths decide exactly as the paths they replaced: the finishing-
policy check, the response decoder, and the retry jitter seeded on first use."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import jiter
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_helpers import arun
from test_openai_policy import RESET, ctx

from gymforge.core.policy import FinishingPolicy
from gymforge.core.seeding import derive_seed
from gymforge.rollout.episode import finishes
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.server import decode_json
from gymforge.testing import OpenAITestServer
from tests.budget import examples


async def _finish(self: object) -> None:
    return None


@settings(max_examples=200, deadline=None)
@given(
    nominal=st.booleans(),
    class_finish=st.sampled_from(["method", "none", "absent", "attr"]),
    instance_finish=st.sampled_from(["unset", "none", "callable", "value"]),
)
def test_finishes_is_the_protocol_check(
    nominal: bool, class_finish: str, instance_finish: str
) -> None:
    body: dict[str, Any] = {}
    if class_finish == "method":
        body["finish"] = _finish
    elif class_finish == "none":
        body["finish"] = None
    elif class_finish == "attr":
        body["finish"] = 3
    bases: tuple[type, ...] = (FinishingPolicy,) if nominal else (object,)
    cls = type("P", bases, body)
    obj = cls()
    if instance_finish != "unset":
        obj.finish = {"none": None, "callable": lambda: None, "value": 1}[instance_finish]
    assert finishes(obj) is isinstance(obj, FinishingPolicy)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=40,
)


def _decoded(decode: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "ok", decode(data)
    except ValueError as err:
        return "error", str(err)


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, floats bit for bit, keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a.hex() == b.hex() or (a != a and b != b)
    return bool(a == b)


@examples(500)
def test_decode_json_is_jiters_default_decode(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(json_values, st.sampled_from([None, 2]))
    def check(value: Any, indent: int | None) -> None:
        data = json.dumps(value, indent=indent).encode()
        a, b = _decoded(decode_json, data), _decoded(jiter.from_json, data)
        assert a[0] == b[0] and (_same(a[1], b[1]) if a[0] == "ok" else a == b)

    check()


ODD_INPUT = [b"", b"{", b"NaN", b"[Infinity, -Infinity]", b'{"a": 1, "a": 2}', b'"\\ud800"',
             b"\xff", b"[" * 300 + b"]" * 300, b"1e400", b"123456789012345678901234567890",
             b"[1,]"]  # fmt: skip


@pytest.mark.parametrize(
    "data",
    ODD_INPUT,
)
def test_decode_json_is_jiters_on_odd_input(data: bytes) -> None:
    a, b = _decoded(decode_json, data), _decoded(jiter.from_json, data)
    assert a[0] == b[0] and (_same(a[1], b[1]) if a[0] == "ok" else a == b)


def test_decode_json_of_a_reply_with_logprobs() -> None:
    entries = [
        {"token": chr(65 + i % 26), "logprob": -i / 7, "bytes": [65 + i % 26], "top_logprobs": []}
        for i in range(300)
    ]
    reply = {"choices": [{"message": {"content": "x"}, "logprobs": {"content": entries}}]}
    data = json.dumps(reply).encode()
    assert _same(decode_json(data), jiter.from_json(data))


@pytest.mark.parametrize("request_path", ["fast", "lean"])
def test_retry_jitter_is_seeded_as_at_the_start(request_path: str) -> None:
    """The backoff generator, made when a retry first waits, draws what the one seeded at
    the episode's start drew: the delays are the same."""
    slept: list[float] = []
    real_sleep = asyncio.sleep
    loops: list[asyncio.AbstractEventLoop] = []

    async def sleep(delay: float, result: Any = None) -> Any:
        if asyncio.get_running_loop() in loops:  # not the server's thread
            slept.append(delay)
            delay = 0
        return await real_sleep(delay, result)

    retry = Retry(max_attempts=4, base_delay=0.01, max_delay=0.05, call_timeout=10.0)
    with OpenAITestServer() as server:
        server.inject("503", "503", "503")
        factory = OpenAIPolicyFactory(
            "m",
            base_url=server.base_url,
            retry=retry,
            request_path=request_path,  # type: ignore[arg-type]
        )

        async def go() -> None:
            loops.append(asyncio.get_running_loop())
            policy = factory()
            c = ctx(sampling_seed=5)
            await policy.start(c)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(asyncio, "sleep", sleep)
                await policy.act(RESET)
            await factory.aclose()

        arun(go())
    c = ctx(sampling_seed=5)
    rng = random.Random(derive_seed("openai-policy-backoff", c.task_id, c.seed, 5))
    assert slept == [retry.delay(k, rng) for k in range(3)]


@examples(300)
def test_keys_record_is_the_keys_dump(examples: int) -> None:
    """The episode's base fields, copied from an ``EpisodeKeys``, are its dump: the same
    keys in the same order and the same values (validated or built by ``model_construct``)."""

    @settings(max_examples=examples, deadline=None)
    @given(
        texts=st.lists(st.text(max_size=12), min_size=7, max_size=7),
        ints=st.lists(st.integers(0, 2**64), min_size=2, max_size=2),
        optional=st.lists(st.one_of(st.none(), st.integers(0, 2**40)), min_size=1, max_size=1),
        weight=st.one_of(st.none(), st.text(max_size=5)),
        constructed=st.booleans(),
    )
    def check(
        texts: list[str],
        ints: list[int],
        optional: list[int | None],
        weight: str | None,
        constructed: bool,
    ) -> None:
        from gymforge.rollout.episode import keys_record
        from gymforge.trajectory.schema import EpisodeKeys

        run_id, episode_id, task_id, env_id, env_version, renderer, checkpoint = texts
        values = dict(
            run_id=run_id, episode_id=episode_id, task_id=task_id, seed=ints[0], env_id=env_id,
            env_version=env_version, renderer_version=renderer, policy_checkpoint=checkpoint,
            weight_version=weight, rollout=ints[1], sampling_seed=optional[0],
        )  # fmt: skip
        keys = EpisodeKeys.model_construct(**values) if constructed else EpisodeKeys(**values)
        assert list(keys_record(keys).items()) == list(keys.model_dump().items())

    check()


# ---- token capture: the C-speed type counts decide as the type sets did ------------------
def _capture_by_type_sets(data: Any) -> dict[str, Any]:
    """``capture_fields`` as it was written before its checks counted types: the oracle
    (with the later rule that an integer past the largest float is no logprob)."""
    import math
    import re

    def int_list(value: Any) -> list[int] | None:
        return value if isinstance(value, list) and set(map(type, value)) <= {int} else None

    def logprob_list(entries: list[dict[str, Any]]) -> list[float] | None:
        try:
            values = [e["logprob"] for e in entries]
        except KeyError:
            return None
        types = set(map(type, values))
        if not types <= {int, float}:
            return None
        try:
            floats = [float(v) for v in values]
        except OverflowError:
            return None
        if not math.isfinite(sum(floats)):
            return None
        return values if types == {float} else floats

    choice = data["choices"][0]
    prompt_ids = int_list(data.get("prompt_token_ids"))
    completion_ids = int_list(choice.get("token_ids"))
    lp = choice.get("logprobs")
    entries = lp.get("content") if isinstance(lp, dict) else None
    logprobs = None
    if isinstance(entries, list) and set(map(type, entries)) <= {dict}:
        logprobs = logprob_list(entries)
        if completion_ids is None and entries:
            matches = [re.fullmatch(r"token_id:(\d+)", str(e.get("token"))) for e in entries]
            if all(matches):
                completion_ids = [int(m.group(1)) for m in matches if m]
    level = "text"
    if prompt_ids is not None and completion_ids is not None:
        level = "tokens"
    elif logprobs is not None:
        level = "logprobs"
    return {
        "capture_level": level,
        "prompt_token_ids": prompt_ids,
        "completion_token_ids": completion_ids,
        "logprobs": logprobs,
    }


class _Int(int):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


_ids = st.lists(
    st.integers(0, 10**6), max_size=6
) | st.lists(  # mostly ints, with what is not one: a bool, a float, an int subclass, big ints
    st.integers(-(2**70), 2**70)
    | st.booleans()
    | st.floats(allow_nan=True)
    | st.builds(_Int, st.integers(0, 9))
    | st.none()
    | st.text(max_size=3),
    max_size=6,
)
_logprob = (
    st.floats(max_value=0.0)
    | st.floats()
    | st.integers(-(2**1100), 2**1100)
    | st.booleans()
    | st.none()
    | st.text(max_size=2)
)
_token = st.sampled_from(["token_id:7", "token_id:12", "a", "token_id:x", ""]) | st.none()


@st.composite
def _entry(draw: st.DrawFn) -> Any:
    entry: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        entry["logprob"] = draw(_logprob)
    if draw(st.booleans()):
        entry["token"] = draw(_token)
    shape = draw(st.integers(0, 19))
    if shape == 0:
        return _Dict(entry)
    if shape == 1:
        return draw(st.none() | st.text(max_size=2) | st.just([1]))
    return entry


@st.composite
def _reply(draw: st.DrawFn) -> dict[str, Any]:
    choice: dict[str, Any] = {}
    data: dict[str, Any] = {"choices": [choice]}
    if draw(st.booleans()):
        data["prompt_token_ids"] = draw(_ids | st.none() | st.just((1, 2)))
    if draw(st.booleans()):
        choice["token_ids"] = draw(_ids | st.none())
    kind = draw(st.integers(0, 5))
    if kind:
        entries = draw(st.lists(_entry(), max_size=6))
        content: Any = entries if kind > 1 else draw(st.none() | st.just({"a": 1}))
        choice["logprobs"] = {"content": content} if kind != 2 else _Dict(content=content)
    return data


def _outcome(capture: Any, data: Any) -> Any:
    try:
        out = capture(data)
    except Exception as err:  # the oracle raises too (an int logprob past a float's range)
        return type(err)
    return [(k, v, [type(x) for x in v] if isinstance(v, list) else None) for k, v in out.items()]


@examples(3000)
def test_capture_fields_counts_types_as_the_type_sets_decided(examples: int) -> None:
    from gymforge.rollout.parsing import capture_fields

    @settings(max_examples=examples, deadline=None)
    @given(_reply())
    def check(data: dict[str, Any]) -> None:
        assert _outcome(capture_fields, data) == _outcome(_capture_by_type_sets, data)

    check()


def test_capture_fields_refuses_what_is_not_exactly_an_int_or_a_float() -> None:
    from gymforge.rollout.parsing import capture_fields

    for odd in (True, 1.0, _Int(1), None):
        data = {"prompt_token_ids": [1, odd], "choices": [{"token_ids": [2]}]}
        assert capture_fields(data)["prompt_token_ids"] is None, odd
    entries = [{"logprob": -0.5}, {"logprob": True}]
    assert capture_fields({"choices": [{"logprobs": {"content": entries}}]})["logprobs"] is None
    entries = [{"logprob": -0.5}, _Dict(logprob=-1.0)]
    assert capture_fields({"choices": [{"logprobs": {"content": entries}}]})["logprobs"] is None
    entries = [{"logprob": -0.5}, {"logprob": -1}]
    assert capture_fields({"choices": [{"logprobs": {"content": entries}}]})["logprobs"] == [
        -0.5,
        -1.0,
    ]
