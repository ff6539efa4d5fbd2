"""Hostile answers at the edges of what the fast reader of a chat completion
(``chat_reply.read_chat``) and the reference (``jiter`` whole, then ``reply_from_json``)
read: integers past ``jiter``'s 4,300 digits (the module's second stated difference, only
in fields no turn keeps), and a logprob token past ``int()``'s digit limit (an odd shape,
never an error)."""

from __future__ import annotations

import json

import pytest
from test_chat_reply import outcome, reference, vllm_answer

from gymforge.rollout.chat_reply import read_chat
from gymforge.rollout.parsing import capture_fields

_BIG = "1" + "0" * 4300
"""An integer of 4,301 digits: one past what ``jiter`` reads ("number out of range")."""

_UNKEPT = {
    "usage": ('"prompt_tokens": 3', f'"prompt_tokens": {_BIG}'),
    "choice index": ('"index": 0', f'"index": -{_BIG}'),
    "logprob entry bytes": ('"bytes": [84', f'"bytes": [{_BIG}'),
    "message field": ('"role": "assistant"', f'"role": {_BIG}'),
}


def _answer_with(old: str, new: str) -> bytes:
    """A vLLM answer's text with its first ``old`` made ``new``."""
    text = json.dumps(vllm_answer())
    assert old in text
    return text.replace(old, new, 1).encode()


@pytest.mark.parametrize("where", sorted(_UNKEPT))
def test_an_integer_past_jiters_digits_is_read_only_where_no_turn_keeps_it(where: str) -> None:
    """The module's second stated difference: ``jiter`` refuses it anywhere; the fast reader
    reads it in a field no turn keeps, into the turn of the answer without it."""
    content = _answer_with(*_UNKEPT[where])
    refused = outcome(reference, content)
    assert refused[0] == "ValueError" and refused[1].startswith("number out of range")
    plain = json.dumps(vllm_answer()).encode()
    assert outcome(read_chat, content) == outcome(reference, plain)


_KEPT = {
    "token_ids": ('"token_ids": [791', f'"token_ids": [{_BIG}'),
    "prompt_token_ids": ('"prompt_token_ids": [1', f'"prompt_token_ids": [-{_BIG}'),
    "logprob": ('"logprob": -0.25', f'"logprob": -{_BIG}'),
    "tool_calls": ('"tool_calls": []', f'"tool_calls": [{{"function": {{"x": {_BIG}}}}}]'),
}


@pytest.mark.parametrize("where", sorted(_KEPT))
def test_an_integer_past_jiters_digits_in_a_field_a_turn_keeps_is_refused_by_both(
    where: str,
) -> None:
    content = _answer_with(*_KEPT[where])
    assert outcome(reference, content)[1].startswith("number out of range")
    assert outcome(read_chat, content) == outcome(reference, content)


def _token_id_answer(digits: int) -> bytes:
    answer = vllm_answer()
    choice = answer["choices"][0]
    del choice["token_ids"]
    for entry in choice["logprobs"]["content"]:
        entry["token"] = "token_id:" + "7" * digits
    return json.dumps(answer).encode()


def test_a_token_id_past_ints_digit_limit_is_not_an_answer_that_is_not_json() -> None:
    """``read_chat`` raises ``ValueError`` only for what is not JSON (its contract, which
    ``post_json`` reports as "response is not JSON" and retries); ``capture_fields`` never
    raises on odd shapes. A logprob token ``token_id:`` with more digits than ``int()``
    converts (4,300) is valid JSON of an odd shape: no ids, the logprobs kept."""
    content = _token_id_answer(4301)
    assert json.loads(content)  # JSON
    reply = read_chat(content)
    level, _, completion_ids, logprobs = reply.capture
    assert (level, completion_ids) == ("logprobs", None) and logprobs is not None
    assert capture_fields(json.loads(content))["completion_token_ids"] is None
    assert outcome(read_chat, content) == outcome(reference, content)
