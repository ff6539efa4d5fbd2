"""The token-in side of the test server, shaped like vLLM's: ``POST /v1/completions`` with
a prompt given as token ids (or text), ``POST /tokenize`` (chat or text form) and
``POST /detokenize``.

A completion's prompt ids are read back into chat messages (:func:`parse_prompt`) so the
same responders answer chat and token-id requests. The completion is the reply's raw text
(:func:`render_completion`, hermes-style ``<tool_call>`` blocks) followed by the fake EOS,
cut at the first stop string (kept in the text only with ``include_stop_str_in_output``;
its tokens stay in ``token_ids`` either way, as vLLM's do) or at ``max_tokens`` (when the
request sends none, ``default_max_tokens``: vLLM's is 16; a full context is refused in
vLLM's wordings, :func:`~gymforge.testing.openai_server.fake.vllm_max_tokens`). The
response has vLLM's per-choice ``token_ids`` and ``prompt_token_ids`` (when
``return_token_ids``) and completions-style ``logprobs`` (``tokens``, ``token_logprobs``,
``top_logprobs``, ``text_offset``).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from gymforge.testing.openai_server.fake import (
    EOS,
    Responder,
    ServedError,
    ServedReply,
    apply_stop,
    fake_detokenize,
    fake_logprob,
    fake_tokenize,
    parse_prompt,
    render_completion,
    render_prompt,
    vllm_max_tokens,
)


def prompt_ids(body: dict[str, Any]) -> list[int]:
    """The request's prompt as token ids (``ServedError`` 400 if it is neither ids nor text)."""
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], list):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, list) and all(type(t) is int and 0 <= t < 512 for t in prompt):
        return list(prompt)
    if isinstance(prompt, str):
        return fake_tokenize(prompt)
    raise ServedError(400, "prompt must be a string or a list of token ids")


def text_completion(
    responder: Responder,
    body: dict[str, Any],
    model: str,
    max_context: int | None,
    malformed: bool = False,
    default_max_tokens: int | None = None,
) -> dict[str, Any]:
    """The completions response for ``body`` (see the module docstring)."""
    ids = prompt_ids(body)
    text = fake_detokenize(ids)
    parsed = parse_prompt(text)
    reply = responder({**body, **parsed})
    if isinstance(reply, str):
        reply = ServedReply(content=reply)
    calls = [
        {"function": {"name": c.name, "arguments": _broken(c.arguments_text(), malformed)}}
        for c in reply.tool_calls
    ]
    generated = render_completion(reply.content, calls)
    if malformed and not calls:
        generated += '<tool_call>{"name": "x", "arguments": {'
    max_tokens = vllm_max_tokens(len(ids), body.get("max_tokens"), max_context, default_max_tokens)
    include = bool(body.get("include_stop_str_in_output"))
    out_text, cut, stop_string = apply_stop(generated, body.get("stop"), include)
    completion = fake_tokenize(generated[:cut])
    finish = "stop"
    if stop_string is None:
        completion += fake_tokenize(EOS)  # the EOS is in token_ids, not in the text
    if len(completion) > max_tokens:
        completion = completion[:max_tokens]
        out_text = fake_detokenize(completion)
        finish, stop_string = "length", None
    choice: dict[str, Any] = {
        "index": 0,
        "text": out_text,
        "logprobs": None,
        "finish_reason": finish,
        "stop_reason": stop_string,
    }
    if body.get("logprobs") is not None:
        choice["logprobs"] = _logprobs(completion, int(body.get("logprobs") or 0))
    if body.get("return_token_ids"):
        choice["token_ids"] = completion
        choice["prompt_token_ids"] = ids
    digest = hashlib.sha256(bytes(t & 0xFF for t in ids)).hexdigest()[:16]
    return {
        "id": f"cmpl-{digest}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": body.get("model") or model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(ids),
            "completion_tokens": len(completion),
            "total_tokens": len(ids) + len(completion),
        },
    }


def _broken(arguments: str, malformed: bool) -> str:
    """The arguments text, made invalid JSON (the ``malformed`` fault) when asked."""
    return (arguments[:-1] or "{") if malformed else arguments


def _logprobs(ids: list[int], top: int) -> dict[str, Any]:
    tokens = [fake_detokenize([t]) for t in ids]
    offsets, at = [], 0
    for t in tokens:
        offsets.append(at)
        at += len(t)
    lps = [fake_logprob(t, i) for i, t in enumerate(ids)]
    tops = [
        {fake_detokenize([(t + j) % 256]): fake_logprob((t + j) % 256, i) for j in range(top)}
        for i, t in enumerate(ids)
    ]
    return {
        "tokens": tokens,
        "token_logprobs": lps,
        "top_logprobs": tops if top else None,
        "text_offset": offsets,
    }


def tokenize(body: dict[str, Any], max_context: int | None) -> dict[str, Any]:
    """vLLM's ``/tokenize``: chat messages through the fake template, or a text prompt."""
    if isinstance(body.get("messages"), list):
        text = render_prompt(
            body["messages"], body.get("tools"), bool(body.get("add_generation_prompt", True))
        )
    elif isinstance(body.get("prompt"), str):
        text = body["prompt"]
    else:
        raise ServedError(400, "give messages or prompt")
    ids = fake_tokenize(text)
    return {"count": len(ids), "max_model_len": max_context or 1 << 20, "tokens": ids}


def detokenize(body: dict[str, Any]) -> dict[str, Any]:
    tokens = body.get("tokens")
    if not isinstance(tokens, list) or not all(type(t) is int for t in tokens):
        raise ServedError(400, "tokens must be a list of ints")
    return {"prompt": fake_detokenize(tokens)}
