"""A completions answer (the ``vllm:`` policy's) read into what a turn keeps of it.

The token-in policy (:mod:`gymforge.rollout.vllm_policy`) keeps, of ``choices[0]``: the
``text``, the ``token_ids`` and the echoed ``prompt_token_ids`` (checked against the ids it
sent), ``logprobs.token_logprobs``, ``finish_reason``; and the answer's ``model``. The bulk
is what it does not keep: ``logprobs.tokens``, ``top_logprobs`` and ``text_offset`` (one
entry per token each), ``usage``, ids. The echoed prompt grows with every turn.

:func:`read_completion` decodes the kept fields into exact types and skips the rest, as
:mod:`gymforge.rollout.kept_fields` states (the fallback to the reference for every answer
of another shape, and the two differences kept). It returns the answer as the policy reads
it: a dict of those fields alone, in the shape of the answer, each holding the value the
reference (``first_choice(decode_json(content))``) holds there
(``tests/rollout/test_completion_reply.py`` holds the policy's reading of both equal on
generated and hostile answers).

The echoed prompt is the longest field, and the policy only checks it against the ids it
sent: given those ids and their JSON (``sent``), the reader compares the echo's bytes, less
JSON whitespace, with that JSON, and on a match keeps the sent list itself (the same ints
the reference would decode); any other echo is decoded.

:func:`read_turn` makes that reading the turn (:class:`CompletionTurn`), after
:func:`checked_ids` checked the server took the prompt ids verbatim and returned ids at all
(``TokenInUnsupported`` otherwise: not a token-in server).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from gymforge.rollout.kept_fields import decode_kept
from gymforge.rollout.parsing import finite_floats, int_list
from gymforge.rollout.server_http import decode_json, first_choice
from gymforge.rollout.tokenize_endpoint import ALTERNATIVE, TokenInUnsupported


class _Logprobs(msgspec.Struct, gc=False):
    token_logprobs: list[float] | None = None


class _Choice(msgspec.Struct, gc=False):
    text: str | None = None
    token_ids: list[int] | None = None
    prompt_token_ids: msgspec.Raw = msgspec.Raw()  # empty when absent
    finish_reason: str | None = None
    logprobs: _Logprobs | None = None


class _Answer(msgspec.Struct, gc=False):
    choices: Annotated[list[_Choice], msgspec.Meta(min_length=1)]  # else first_choice's error
    model: str | None = None


_DECODER = msgspec.json.Decoder(_Answer)
_IDS = msgspec.json.Decoder(list[int] | None)
_JSON_SPACE = b" \t\r\n"
SentPrompt = tuple[list[int], bytes]  # the prompt ids and their JSON array, without spaces


def read_completion(content: bytes, sent: SentPrompt | None = None) -> dict[str, Any]:
    """The answer's bytes as the policy reads them (module docstring); ``ValueError`` when
    they are not JSON, ``BadResponse`` when the answer has no choices, as
    ``first_choice(decode_json(content))`` raises them."""
    answer = decode_kept(_DECODER, content)
    if answer is None:
        return first_choice(decode_json(content))
    choice = answer.choices[0]
    echo = bytes(choice.prompt_token_ids)
    echoed: list[int] | None
    if sent is not None and (echo == sent[1] or echo.translate(None, _JSON_SPACE) == sent[1]):
        echoed = sent[0]
    elif not echo:
        echoed = None
    else:
        try:
            echoed = _IDS.decode(echo)
        except msgspec.DecodeError:
            return first_choice(decode_json(content))
    logprobs = (
        None if choice.logprobs is None else {"token_logprobs": choice.logprobs.token_logprobs}
    )
    kept = {
        "text": choice.text,
        "token_ids": choice.token_ids,
        "prompt_token_ids": echoed,
        "finish_reason": choice.finish_reason,
        "logprobs": logprobs,
    }
    return {"model": answer.model, "choices": [kept]}


@dataclass(frozen=True, slots=True)
class CompletionTurn:
    """What a turn keeps of a completions answer (:func:`read_turn`)."""

    completion: list[int]
    text: str
    logprobs: list[float] | None
    finish_reason: str | None
    model: str | None


def read_turn(data: dict[str, Any], prompt: list[int], where: str | None) -> CompletionTurn:
    """The turn of a completions answer (its first choice), after :func:`checked_ids`."""
    choice = data["choices"][0]
    completion = checked_ids(choice, prompt, where)
    text, finish, model = choice.get("text"), choice.get("finish_reason"), data.get("model")
    return CompletionTurn(
        completion,
        text if isinstance(text, str) else "",
        sampled_logprobs(choice),
        finish if isinstance(finish, str) else None,
        model if isinstance(model, str) else None,
    )


def checked_ids(choice: dict[str, Any], prompt: list[int], where: str | None) -> list[int]:
    """The completion ids, after checking the server took the prompt ids verbatim."""
    completion = choice.get("token_ids")
    echoed = choice.get("prompt_token_ids")
    if not isinstance(completion, list) or not isinstance(echoed, list):
        raise TokenInUnsupported(
            f"{where or 'server'} returned no token ids for a token-id prompt (not vLLM?); "
            + ALTERNATIVE
        )
    if int_list(completion) is None:
        raise TokenInUnsupported(
            f"{where or 'server'} returned completion token ids that are not integers; "
            + ALTERNATIVE
        )
    if echoed is not prompt and echoed != prompt:
        raise TokenInUnsupported(
            f"{where or 'server'} did not take the prompt token ids verbatim (it re-tokenised "
            f"them: {len(echoed)} ids back for {len(prompt)} sent); {ALTERNATIVE}"
        )
    return completion


def sampled_logprobs(choice: dict[str, Any]) -> list[float] | None:
    """The sampled tokens' logprobs as the server returned them (None when it returned none,
    or values JSON cannot hold). A list of another length than the completion's ids is
    kept as it is, never dropped: the export refuses the episode then
    (``logprobs_length_mismatch``, ``trajectory.export``), where a turn recorded without
    logprobs would pass as one the server gave none for."""
    lp = choice.get("logprobs")
    values = lp.get("token_logprobs") if isinstance(lp, dict) else None
    if not isinstance(values, list):
        return None
    return finite_floats(values)
