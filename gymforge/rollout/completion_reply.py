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
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from gymforge.rollout.kept_fields import decode_kept
from gymforge.rollout.server_http import decode_json, first_choice


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
