"""Decoding only the fields a policy keeps of a server's answer, into exact types.

A policy keeps little of an inference server's answer: the text or message, the token ids,
one logprob per sampled token, the finish reason and the model. The bulk is what it does not
keep (per-token ``bytes``, ``top_logprobs`` and token strings, offsets, ``usage``). The
readers of the chat and completions answers (:mod:`gymforge.rollout.chat_reply`,
:mod:`gymforge.rollout.completion_reply`) decode the kept fields with a ``msgspec`` decoder
of exact types and skip the rest, and fall back to the reference (the answer decoded whole
by ``jiter``, :func:`gymforge.rollout.server_http.decode_json`, then read as before) for
every answer the decoder refuses: a kept field of another type, NaN or an infinity (which
``msgspec`` refuses and ``jiter`` reads), bytes that are not UTF-8 (checked here:
``msgspec`` does not check the fields it skips, and ``jiter`` refuses them anywhere), or
anything else. What a reader returns for an answer it decoded is what the reference gives.

Two differences are kept, and only for answers the reference refuses: ``jiter`` refuses
nesting past 200 levels, and a number whose integer part has more than 4,300 digits (an
integer, or one with a fraction or exponent), anywhere in an answer, as an error the policy
retries; the fast readers read an answer whose deep nesting or long number is in a field no
policy keeps (``msgspec`` skips such a field, up to its own nesting limit; a chat answer's
logprob ``token`` is one when the answer has ``token_ids``), and nesting in a
chat answer's ``tool_calls`` (decoded by ``jiter`` on their own) is counted from there. (In a
kept field both refuse them: ``msgspec`` reads ids of any size up to the same 4,300 digits,
and refuses a logprob past the largest float, which the reference then reads.) Both are the
server's, never the model's: what a model writes reaches the answer as JSON strings. Refusing
long numbers as ``jiter`` does would take a scan of the bytes costing a fifth or more of the
read.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

Kept = TypeVar("Kept")


def decode_kept(decoder: msgspec.json.Decoder[Kept], content: bytes) -> Kept | None:
    """``content`` decoded by ``decoder``, or None when it refuses it or the bytes are not
    UTF-8 (then the reader falls back to the reference)."""
    if not content.isascii():
        try:
            content.decode()
        except UnicodeDecodeError:
            return None
    try:
        return decoder.decode(content)
    except (msgspec.DecodeError, RecursionError):
        return None
