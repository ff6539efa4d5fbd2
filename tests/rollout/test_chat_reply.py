"""The fast reader of a chat completion's answer (``chat_reply.read_chat``) gives the turn
the reference gives (the answer decoded whole by ``jiter``, then ``reply_from_json``), or
the same error, on generated and hostile answers; and it is the path plain answers take."""

from __future__ import annotations

import json
from typing import Any

import pytest
from answer_mutations import ODD, bend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gymforge.rollout import chat_reply
from gymforge.rollout.chat_reply import read_chat, reply_from_json, turn_from_reply
from gymforge.rollout.server_http import BadResponse, decode_json, first_choice
from tests.budget import examples


def outcome(read: Any, content: bytes) -> tuple[str, ...]:
    """The turn and transcript message an answer gives (repr: ``-0.0`` against ``0.0`` and
    ``1`` against ``1.0`` count), or the error it raises."""
    try:
        turn, message = turn_from_reply(read(content), "w1", "call_7")
    except (ValueError, BadResponse) as err:
        return (type(err).__name__, str(err))
    return ("turn", repr(turn), repr(message))


def reference(content: bytes) -> Any:
    return reply_from_json(first_choice(decode_json(content)))


def same(content: bytes) -> None:
    assert outcome(read_chat, content) == outcome(reference, content), content[:300]


def vllm_answer(**over: Any) -> dict[str, Any]:
    """An answer as vLLM sends one with ``logprobs`` and ``return_token_ids``."""
    entries = [
        {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
        for t, lp in (("The", -0.25), (" answer", -1.5), (" é", 0.0), ("😀", -3.0e-7))
    ]
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": "The answer é😀", "tool_calls": []},
        "logprobs": {"content": entries},
        "finish_reason": "stop",
        "token_ids": [791, 4320, 19369, 76460],
    }
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
        "prompt_token_ids": [1, 2, 3],
    }
    answer.update(over)
    return answer


def test_plain_answers_take_the_fast_path() -> None:
    tool_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q": 1}'},
    }
    with_call = vllm_answer()
    with_call["choices"][0]["message"] = {"content": None, "tool_calls": [tool_call]}
    as_ids = vllm_answer()
    del as_ids["choices"][0]["token_ids"]
    for entry, tid in zip(as_ids["choices"][0]["logprobs"]["content"], (5, 6, 7, 8), strict=True):
        entry["token"] = f"token_id:{tid}"
    for answer in (vllm_answer(), with_call, as_ids, vllm_answer(choices=[{}])):
        for text in (json.dumps(answer), json.dumps(answer, ensure_ascii=False)):
            content = text.encode()
            assert chat_reply._read_plain(content) is not None
            same(content)
    turn, message = turn_from_reply(read_chat(json.dumps(with_call).encode()), None)
    assert turn.tool_calls == [tool_call] and message["tool_calls"][0]["id"] == "c1"
    turn, _ = turn_from_reply(read_chat(json.dumps(as_ids).encode()), None)
    assert turn.completion_token_ids == [5, 6, 7, 8] and turn.capture_level == "tokens"


def count_token_decodes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The answers the reader's second decode (``_TOKEN_DECODER``) reads from now on."""
    decoded: list[bytes] = []
    tokens = chat_reply._TOKEN_DECODER

    class Counting:
        def decode(self, content: bytes) -> Any:
            decoded.append(content)
            return tokens.decode(content)

    monkeypatch.setattr(chat_reply, "_TOKEN_DECODER", Counting())
    return decoded


def test_tokens_are_read_only_when_the_answer_has_no_token_ids(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A string per completion token is the bulk of a vLLM answer's logprobs: an answer with
    ``token_ids`` is read without decoding them (a second decode, of the tokens alone, reads
    the ids they spell when it has none)."""
    decoded = count_token_decodes(monkeypatch)
    same(json.dumps(vllm_answer()).encode())
    assert decoded == []
    as_ids = vllm_answer()
    del as_ids["choices"][0]["token_ids"]
    content = json.dumps(as_ids).encode()
    same(content)
    assert decoded == [content]


HOSTILE = [
    b"",
    b"null",
    b"[]",
    b'{"choices": []}',
    b'{"choices": {}}',
    b'{"choices": [1]}',
    b'{"choices": [{}, 1]}',
    b'{"choices": [{}]} x',
    b'\xef\xbb\xbf{"choices": [{}]}',
    b'{"choices": [{}], "x": "\xff"}',
    b'{"choices": [{}], "x": "\xed\xa0\x80"}',
    b'{"choices": [{}], "x": "\\ud800"}',
    b'{"choices": [{}], "x": NaN}',
    b'{"choices": [{}], "x": 1e999}',
    b'{"choices": [{}], "x": 01}',
    b'{"choices": [{}], "x": [1,]}',
    b'{"choices": [{}], "x": "a\tb"}',
    b'{"choices": [{}]\x0c}',
    b'{"choices": [{"message": "hi"}]}',
    b'{"choices": [{"message": {"content": ["a", {"text": "b"}]}}]}',
    b'{"choices": [{"message": {"content": 5}}]}',
    b'{"choices": [{"message": {"content": "a", "tool_calls": "x"}}]}',
    b'{"choices": [{"message": {"content": "a", "tool_calls": [1, 2]}}]}',
    b'{"choices": [{"message": {"tool_calls": [{"function": {"arguments": NaN}}]}}]}',
    b'{"choices": [{"message": {"content": "a"}, "message": null}]}',
    b'{"choices": [{"message": null, "message": {"content": "b"}}]}',
    b'{"model": 1, "model": "m", "choices": [{}]}',
    b'{"mod\\u0065l": "m", "ch\\u006fices": [{"finish_\\u0072eason": "stop"}]}',
    b'{"choices": [{"finish_reason": 3}]}',
    b'{"choices": [{"token_ids": [1, true]}], "prompt_token_ids": [1]}',
    b'{"choices": [{"token_ids": [1, 1.0]}], "prompt_token_ids": [1]}',
    b'{"choices": [{"token_ids": [18446744073709551616]}], "prompt_token_ids": [-1]}',
    b'{"choices": [{"token_ids": [1' + b"0" * 5000 + b']}], "prompt_token_ids": [1]}',
    b'{"choices": [{"token_ids": null}], "prompt_token_ids": "x"}',
    b'{"choices": [{"logprobs": null}]}',
    b'{"choices": [{"logprobs": {}}]}',
    b'{"choices": [{"logprobs": {"content": null}}]}',
    b'{"choices": [{"logprobs": {"content": []}}]}',
    b'{"choices": [{"logprobs": {"content": [1]}}]}',
    b'{"choices": [{"logprobs": {"content": [{}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": true}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1}, {"logprob": -0}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -0.0}, {"logprob": -1e-400}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1' + b"0" * 400 + b"}]}}]}",
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1e308}, {"logprob": -1e308}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": 9007199254740993}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -Infinity}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": 7}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:7"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1}]}}], "prompt_token_ids": [1]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:+7"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:\\u0667"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": [7]}]}, "token_ids": [7]}]}',
    b'{"choices": [{"token_ids": [7], "logprobs": {"content": [{"logprob": -1, "token": 7}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": {"a": 1}}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "\\ud800"}]}}]}',
]


@pytest.mark.parametrize("content", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_read_as_the_reference_reads_them(content: bytes) -> None:
    same(content)


def test_deep_nesting_is_read_only_where_no_turn_keeps_it() -> None:
    """The one difference the module states: ``jiter`` refuses nesting past 200 levels in
    any field; the fast reader reads it in a field no turn keeps (``msgspec``'s own limit
    then decides), and falls back to the reference past that limit."""
    deep = "[" * 300 + "]" * 300
    skipped = json.dumps(vllm_answer()).replace('"usage": {', f'"usage": {{"deep": {deep}, ', 1)
    assert outcome(reference, skipped.encode())[0] == "ValueError"
    assert outcome(read_chat, skipped.encode())[0] == "turn"
    assert outcome(read_chat, skipped.encode())[1:] == outcome(reference, vllm_answer_bytes())[1:]
    deeper = json.dumps(vllm_answer()).replace('"usage": {', f'"usage": {{"d": {"[" * 5000}', 1)
    same(deeper.encode())  # past msgspec's limit too: refused by both, as the reference says


def vllm_answer_bytes() -> bytes:
    return json.dumps(vllm_answer()).encode()


NUMBER = st.one_of(
    st.floats(max_value=0.0, allow_infinity=True),
    st.floats(),
    st.integers(-(10**20), 10**20),
    st.sampled_from([True, None, "x", -(10**400)]),
)


@st.composite
def answers(draw: st.DrawFn) -> dict[str, Any]:
    answer = vllm_answer()
    choice = answer["choices"][0]
    entries = choice["logprobs"]["content"]
    for entry in entries:
        if draw(st.integers(0, 5)) == 0:
            entry["logprob"] = draw(NUMBER)
        if draw(st.integers(0, 5)) == 0:
            entry["token"] = draw(st.one_of(st.integers(0, 9).map("token_id:{}".format), ODD))
        if draw(st.integers(0, 9)) == 0:
            del entry["logprob"]
    places = [
        (choice, "token_ids"),
        (answer, "prompt_token_ids"),
        (answer, "model"),
        (choice, "finish_reason"),
        (choice["message"], "content"),
        (choice["message"], "tool_calls"),
        (choice, "logprobs"),
        (choice, "message"),
    ]
    bend(draw, answer, places)
    return answer


@examples(400)
def test_generated_answers_read_as_the_reference_reads_them(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(answers(), st.booleans(), st.booleans())
    def check(answer: dict[str, Any], ascii_only: bool, spaced: bool) -> None:
        separators = (", ", ": ") if spaced else (",", ":")
        text = json.dumps(answer, ensure_ascii=ascii_only, separators=separators)
        same(text.encode("utf-8", "surrogatepass"))

    check()
