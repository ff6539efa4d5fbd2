"""The fast reader of a completions answer (``completion_reply.read_completion``, the
``vllm:`` policy's) gives the turn the reference gives (the answer decoded whole by
``jiter``, then ``first_choice``), or the same error, on generated and hostile answers; and
it is the path plain answers take."""

from __future__ import annotations

import json
from typing import Any

import pytest
from answer_mutations import ODD, bend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gymforge.rollout import completion_reply, kept_fields
from gymforge.rollout.completion_reply import read_completion, read_turn
from gymforge.rollout.server_http import BadResponse, decode_json, first_choice
from gymforge.rollout.tokenize_endpoint import TokenInUnsupported
from tests.budget import examples

PROMPT = [151644, 872, 198, 3838, 374]


def outcome(read: Any, content: bytes, prompt: list[int] = PROMPT) -> tuple[str, ...]:
    """The turn the policy reads from an answer (repr: ``-0.0`` against ``0.0`` and ``1``
    against ``1.0`` count), or the error it raises."""
    try:
        return ("turn", repr(read_turn(read(content), prompt, "srv")))
    except (ValueError, BadResponse, TokenInUnsupported) as err:
        return (type(err).__name__, str(err))


def reference(content: bytes) -> Any:
    return first_choice(decode_json(content))


def same(content: bytes, prompt: list[int] = PROMPT) -> None:
    """Read as the reference reads it, with or without the sent prompt to compare the echo
    with (as the policy reads it: :func:`completion_reply.read_completion`'s ``sent``)."""
    want = outcome(reference, content, prompt)
    sent = (prompt, json.dumps(prompt, separators=(",", ":")).encode())
    assert outcome(read_completion, content, prompt) == want, content[:300]
    with_sent = outcome(lambda c: read_completion(c, sent), content, prompt)
    assert with_sent == want, content[:300]


def vllm_answer(**over: Any) -> dict[str, Any]:
    """A completions answer as vLLM sends one for a token-id prompt with ``logprobs: 0``,
    ``return_token_ids`` and ``include_stop_str_in_output``."""
    tokens = ["The", " answer", " é", "😀"]
    choice = {
        "index": 0,
        "text": "".join(tokens),
        "logprobs": {
            "text_offset": [0, 3, 10, 12],
            "token_logprobs": [-0.25, -1.5, 0.0, -3.0e-7],
            "tokens": tokens,
            "top_logprobs": [{t: -0.1} for t in tokens],
        },
        "finish_reason": "stop",
        "stop_reason": None,
        "prompt_logprobs": None,
        "prompt_token_ids": list(PROMPT),
        "token_ids": [791, 4320, 19369, 76460],
    }
    answer = {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1,
        "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 5, "completion_tokens": 4},
    }
    answer.update(over)
    return answer


def test_plain_answers_take_the_fast_path() -> None:
    no_logprobs = vllm_answer()
    del no_logprobs["choices"][0]["logprobs"]
    for answer in (vllm_answer(), no_logprobs):
        for text in (json.dumps(answer), json.dumps(answer, ensure_ascii=False)):
            content = text.encode()
            assert kept_fields.decode_kept(completion_reply._DECODER, content) is not None
            same(content)
    turn = read_turn(read_completion(json.dumps(vllm_answer()).encode()), PROMPT, None)
    assert turn.completion == [791, 4320, 19369, 76460]
    assert turn.logprobs == [-0.25, -1.5, 0.0, -3.0e-7] and turn.text == "The answer é😀"


def test_a_reprompted_or_idless_answer_is_refused_alike() -> None:
    content = json.dumps(vllm_answer()).encode()
    assert outcome(read_completion, content, [1, 2])[0] == "TokenInUnsupported"
    same(content, [1, 2])
    idless = vllm_answer()
    del idless["choices"][0]["token_ids"]
    assert outcome(read_completion, json.dumps(idless).encode())[0] == "TokenInUnsupported"
    same(json.dumps(idless).encode())


HOSTILE = [
    b"",
    b"null",
    b'{"choices": []}',
    b'{"choices": [1]}',
    b'{"choices": [{}, 1]}',
    b'{"choices": [{}]} x',
    b'{"choices": [{}], "x": "\xff"}',
    b'{"choices": [{}], "x": NaN}',
    b'{"choices": [{"text": 5, "token_ids": [1], "prompt_token_ids": [151644]}]}',
    b'{"choices": [{"text": "a", "token_ids": [1, true], "prompt_token_ids": [1]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [true, 872, 198, 3838, 374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644.0, 872, 198, 3838, 374]}]}',
    b'{"choices": [{"token_ids": [18446744073709551616], "prompt_token_ids": []}]}',
    b'{"choices": [{"token_ids": "x", "prompt_token_ids": [1]}]}',
    b'{"choices": [{"token_ids": [1, 2], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "logprobs": {"token_logprobs": [null, -1]}}]}',
    b'{"choices": [{"token_ids": [1, 2], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "logprobs": {"token_logprobs": [-1, -0]}}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "logprobs": {"token_logprobs": [-Infinity]}}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "logprobs": {"token_logprobs": [-1' + b"0" * 400 + b"]}}]}",
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "logprobs": {"token_logprobs": [-1, -2]}}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "logprobs": "x", "finish_reason": 3, "model": "m"}], "model": ["m"]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644, 872, 198, 3838, 374],'
    b' "text": "a", "text": null}], "mod\\u0065l": "m"}',
    # echoes bent against the byte comparison with the sent prompt's JSON
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [\n151644 ,\t872,198,3838,374\r]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,374,]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838 374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,3 74]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,0374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,374.0]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,374e0]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,-374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [[151644,872,198,3838,374]]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": ["151644",872,198,3838,374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,374,1]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": null}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,374],'
    b' "prompt_token_ids": [1]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [1],'
    b' "prompt_token_ids": [151644,872,198,3838,374]}]}',
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,'
    + b"9" * 4301
    + b"]}]}",
    b'{"choices": [{"token_ids": [1], "prompt_token_ids": [151644,872,198,3838,'
    + b"[" * 300
    + b"]" * 300
    + b"]}]}",
]


@pytest.mark.parametrize("content", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_read_as_the_reference_reads_them(content: bytes) -> None:
    same(content)


@st.composite
def answers(draw: st.DrawFn) -> dict[str, Any]:
    answer = vllm_answer()
    choice = answer["choices"][0]
    values = choice["logprobs"]["token_logprobs"]
    for i in range(len(values)):
        if draw(st.integers(0, 5)) == 0:
            values[i] = draw(st.one_of(ODD, st.floats(max_value=0.0)))
    places = [
        (choice, "token_ids"),
        (choice, "prompt_token_ids"),
        (answer, "model"),
        (choice, "finish_reason"),
        (choice, "text"),
        (choice["logprobs"], "token_logprobs"),
        (choice, "logprobs"),
    ]
    bend(draw, answer, places)
    return answer


@examples(400)
def test_generated_answers_read_as_the_reference_reads_them(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(answers(), st.booleans())
    def check(answer: dict[str, Any], ascii_only: bool) -> None:
        text = json.dumps(answer, ensure_ascii=ascii_only)
        same(text.encode("utf-8", "surrogatepass"))

    check()
