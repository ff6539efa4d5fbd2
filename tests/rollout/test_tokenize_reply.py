"""``/tokenize``'s answer read into exact types (``tokenize_endpoint.read_tokenized``) gives
the ids, context length and errors the reference gives: the answer decoded whole by
``jiter``, then its ``tokens`` taken when they are a list of ints only."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import jiter
import pytest
from answer_mutations import ODD, bend
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.rollout.chat_template import Toolset
from gymforge.rollout.server import PolicyServerError, Retry
from gymforge.rollout.tokenize_endpoint import (
    ALTERNATIVE,
    NotAnObject,
    ServerTemplate,
    TokenInUnsupported,
    Tokenized,
    read_tokenized,
)
from gymforge.rollout.vllm_policy import VLLMPolicyFactory


def reference(raw: bytes, factory: Any) -> list[int]:
    """What ``ServerTemplate`` read before the typed reader (kept here as the oracle)."""
    data = jiter.from_json(raw)
    if not isinstance(data, dict):
        raise NotAnObject(str(data)[:200])
    window = data.get("max_model_len")
    if type(window) is int and window > 0:
        factory.context_window = window
    ids = data.get("tokens")
    if not isinstance(ids, list) or not set(map(type, ids)) <= {int}:
        raise TokenInUnsupported(
            f"/tokenize returned no token ids ({str(data)[:200]}); {ALTERNATIVE}"
        )
    return ids


def outcome(raw: bytes, fast: bool) -> tuple[str, ...]:
    factory = SimpleNamespace(context_window=None)
    try:
        template = ServerTemplate(factory)  # type: ignore[arg-type]
        ids = template._ids(read_tokenized(raw)) if fast else reference(raw, factory)
        return ("ids", repr(ids), repr(factory.context_window))
    except (ValueError, TokenInUnsupported) as err:
        return (type(err).__name__, str(err), repr(factory.context_window))


def same(raw: bytes) -> None:
    assert outcome(raw, True) == outcome(raw, False), raw[:300]


def test_a_plain_answer_takes_the_typed_path() -> None:
    raw = b'{"count":3,"max_model_len":4096,"tokens":[151644,872,198],"token_strs":null}'
    assert isinstance(read_tokenized(raw), Tokenized)
    assert outcome(raw, True) == ("ids", "[151644, 872, 198]", "4096")


HOSTILE = [
    b"",
    b"null",
    b"[1, 2]",
    b"{}",
    b'{"tokens": []}',
    b'{"tokens": null, "max_model_len": 5}',
    b'{"tokens": [1, true], "max_model_len": 5}',
    b'{"tokens": [1, 2.0]}',
    b'{"tokens": [1, -2]}',
    b'{"tokens": [1, 18446744073709551616]}',
    b'{"tokens": [1, ' + b"9" * 4300 + b"]}",
    b'{"tokens": [1, ' + b"9" * 4301 + b"]}",
    b'{"tokens": [1], "max_model_len": true}',
    b'{"tokens": [1], "max_model_len": 4096.0}',
    b'{"tokens": [1], "max_model_len": -1}',
    b'{"tokens": [1], "max_model_len": 0}',
    b'{"tokens": [1], "max_model_len": "4096"}',
    b'{"tokens": [1], "max_model_len": 18446744073709551616}',
    b'{"tokens": [1], "x": NaN}',
    b'{"tokens": [1], "x": "\xff"}',
    b'{"tokens": [1], "x": "\\ud800"}',
    b'{"tokens": [1], "tokens": [2]}',
    b'{"tokens": [1], "tokens": [true]}',
    b'{"tokens": [true], "tokens": [1]}',
    b'{"tok\\u0065ns": [3], "tokens": [1]}',
    b'{"tokens": [1]} x',
    b'{"tokens": [1], "x": ' + b"[" * 300 + b"]" * 300 + b"}",
]


@pytest.mark.parametrize("raw", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_read_as_the_reference_reads_them(raw: bytes) -> None:
    if raw.endswith(b"]" * 300 + b"}"):  # nesting in a skipped field: kept_fields' difference
        assert outcome(raw, True)[0] == "ids" and outcome(raw, False)[0] == "ValueError"
        return
    same(raw)


@st.composite
def answers(draw: st.DrawFn) -> dict[str, Any]:
    ids: list[Any] = draw(st.lists(st.integers(0, 2**17), max_size=40))
    for i in range(len(ids)):
        if draw(st.integers(0, 9)) == 0:
            ids[i] = draw(ODD)
    answer: dict[str, Any] = {"count": len(ids), "max_model_len": 32768, "tokens": ids}
    bend(draw, answer, [(answer, "tokens"), (answer, "max_model_len"), (answer, "count")])
    return answer


@settings(max_examples=300, deadline=None)
@given(answers(), st.booleans())
def test_generated_answers_read_as_the_reference_reads_them(
    answer: dict[str, Any], compact: bool
) -> None:
    same(json.dumps(answer, separators=(",", ":") if compact else None).encode())


class Answering:
    """A ``/tokenize`` endpoint that answers ``raw`` with status 200 (``JsonHttp``'s shape)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    prefix = "/v1"

    async def exchange(
        self, path: str, body: bytes, timeout: float | None, *, rooted: bool = False
    ) -> Any:
        return 200, {}, self.raw

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"[1, 2]", "/tokenize answered [1, 2]"),
        (b"null", "/tokenize answered None"),
        (b"<html>bad gateway</html>", "/tokenize answered non-JSON: b'<html>bad gateway</html>'"),
    ],
)
def test_an_answer_that_is_no_object_is_a_bad_answer_in_the_same_words(
    raw: bytes, said: str
) -> None:
    factory = VLLMPolicyFactory("m", base_url="http://127.0.0.1:9/v1", retry=Retry(max_attempts=1))
    template = ServerTemplate(factory)
    factory._lean = Answering(raw)  # type: ignore[assignment]  # the client it posts through
    with pytest.raises(PolicyServerError) as info:
        asyncio.run(template.chat_ids([{"role": "user", "content": "."}], Toolset(None), True))
    assert str(info.value).endswith(f"last: {said}")
