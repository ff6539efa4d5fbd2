"""A chat completion's answer read into what a policy turn keeps of it: :class:`ChatReply`.

A turn keeps little of the answer: ``choices[0]``'s message (its ``content`` and
``tool_calls``), ``finish_reason``, ``model``, and the token capture
(:func:`gymforge.rollout.parsing.capture_fields`: the prompt and completion token ids and
one logprob per completion token). The answer's bulk is what the turn does not keep: each
logprob entry's ``bytes`` and ``top_logprobs``, ``usage``, ids.

Two readers give it, and the same turn from it (:func:`turn_from_reply`):

- :func:`reply_from_json`, the reference, from the answer decoded whole (``jiter``, as
  :func:`gymforge.rollout.server_http.decode_json` decodes every answer);
- :func:`read_chat`, from the answer's bytes: only the fields kept, into exact types, as
  :mod:`gymforge.rollout.kept_fields` states (the fallback to the reference for every
  answer of another shape, and the two differences kept); a turn's logprob tokens are read
  too, for the ids they spell, when the answer has no ``token_ids`` (then the kept fields
  are decoded twice, the second time for the tokens only). It gives the turn the
  reference gives (``tests/rollout/test_chat_reply.py`` holds the two readers' turns equal
  on generated and hostile answers). It builds a fraction of the objects, none of which the
  garbage collector tracks (the structs hold no cycles: ``gc=False``); what that saves a
  rollout is measured by ``benchmarks/rollout_cpu.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from gymforge.rollout.capture import CapturedTurn, captured_turn
from gymforge.rollout.kept_fields import decode_kept
from gymforge.rollout.parsing import (
    Capture,
    capture,
    captured,
    parse_assistant_message,
    token_ids_of,
)
from gymforge.rollout.server_http import decode_json, first_choice


@dataclass(frozen=True, slots=True)
class ChatReply:
    """What a turn keeps of a chat completion's answer (``choices[0]``'s fields as decoded;
    ``capture`` as :func:`gymforge.rollout.parsing.capture_fields` gives it, as a tuple)."""

    message: Any
    finish_reason: Any
    model: Any
    capture: Capture


def reply_from_json(data: Mapping[str, Any]) -> ChatReply:
    """The reference reader: ``data`` is the whole answer, decoded, with a first choice
    that is an object (:func:`~gymforge.rollout.server_http.first_choice`)."""
    choice = data["choices"][0]
    return ChatReply(
        choice.get("message"), choice.get("finish_reason"), data.get("model"), capture(data)
    )


def turn_from_reply(
    reply: ChatReply,
    weight_version: str | None,
    call_id: str = "call_0",
    text_tool_calls: bool = True,
) -> tuple[CapturedTurn, dict[str, Any]]:
    """The ``CapturedTurn`` of a chat completion's answer and its transcript message."""
    message, finish, model = reply.message, reply.finish_reason, reply.model
    parsed = parse_assistant_message(message, call_id, text_tool_calls=text_tool_calls)
    content = message.get("content") if isinstance(message, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    level, prompt_ids, completion_ids, logprobs = reply.capture
    turn = captured_turn(
        parsed.action,
        level,
        content if isinstance(content, str) else None,
        calls if isinstance(calls, list) and calls else None,
        (prompt_ids, completion_ids, logprobs),
        finish if isinstance(finish, str) else None,
        model if isinstance(model, str) else None,
        weight_version,
    )
    return turn, parsed.assistant_message


def turn_from_response(
    data: Mapping[str, Any],
    weight_version: str | None,
    call_id: str = "call_0",
    text_tool_calls: bool = True,
) -> tuple[CapturedTurn, dict[str, Any]]:
    """:func:`turn_from_reply` of an answer already decoded whole."""
    return turn_from_reply(reply_from_json(data), weight_version, call_id, text_tool_calls)


def read_chat(content: bytes) -> ChatReply:
    """The answer's bytes read as :func:`reply_from_json` reads them decoded (module
    docstring); ``ValueError`` when they are not JSON, ``BadResponse`` when the answer has no
    choices, as ``first_choice(decode_json(content))`` raises them."""
    reply = _read_plain(content)
    if reply is None:
        return reply_from_json(first_choice(decode_json(content)))
    return reply


class _Entry(msgspec.Struct, gc=False):
    logprob: float


class _Logprobs(msgspec.Struct, gc=False):
    content: list[_Entry] | None = None


class _Token(msgspec.Struct, gc=False):
    token: str | None = None


class _Tokens(msgspec.Struct, gc=False):
    content: list[_Token] | None = None


class _TokenChoice(msgspec.Struct, gc=False):
    logprobs: _Tokens | None = None


class _TokenAnswer(msgspec.Struct, gc=False):
    choices: list[_TokenChoice]


_NULL = msgspec.Raw(b"null")


class _Message(msgspec.Struct, gc=False):
    content: str | None = None
    tool_calls: msgspec.Raw = _NULL


class _Choice(msgspec.Struct, gc=False):
    message: _Message | None = None
    finish_reason: str | None = None
    token_ids: list[int] | None = None
    logprobs: _Logprobs | None = None


class _Answer(msgspec.Struct, gc=False):
    choices: Annotated[list[_Choice], msgspec.Meta(min_length=1)]  # else first_choice's error
    model: str | None = None
    prompt_token_ids: list[int] | None = None


_DECODER = msgspec.json.Decoder(_Answer)
_TOKEN_DECODER = msgspec.json.Decoder(_TokenAnswer)
"""The logprob entries' tokens, read only for an answer without ``token_ids`` (the ids they
spell are then the completion's): a server that sends the ids (vLLM's
``return_token_ids``) has its tokens, a string per completion token, skipped."""


def _read_plain(content: bytes) -> ChatReply | None:
    """:func:`read_chat` for an answer of the plain shape, else None."""
    answer = decode_kept(_DECODER, content)
    if answer is None:
        return None
    choice = answer.choices[0]
    entries = None if choice.logprobs is None else choice.logprobs.content
    completion_ids = choice.token_ids
    logprobs: list[float] | None = None
    if entries is not None:  # floats all (the decoder makes a JSON int one, refuses the rest)
        values = [e.logprob for e in entries]  # cheaper than map(attrgetter)
        logprobs = values if math.isfinite(sum(values)) else None  # as ``finite_floats``
        if completion_ids is None and entries:
            read = decode_kept(_TOKEN_DECODER, content)
            tokens = None if read is None else read.choices[0].logprobs
            if tokens is None or tokens.content is None:  # the same bytes: never, but then
                return None  # the reference reads the answer
            completion_ids = token_ids_of([t.token for t in tokens.content])
    message: dict[str, Any] | None = None
    if choice.message is not None:
        calls = None
        if choice.message.tool_calls != _NULL:
            try:  # decoded as the reference decodes them
                calls = decode_json(bytes(choice.message.tool_calls))
            except ValueError:
                return None
        message = {"content": choice.message.content, "tool_calls": calls}
    return ChatReply(
        message,
        choice.finish_reason,
        answer.model,
        captured(answer.prompt_token_ids, completion_ids, logprobs),
    )
