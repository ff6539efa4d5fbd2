"""The chat side of the test server: the vLLM-shaped response of
``POST /v1/chat/completions`` for a request, from the server's responder.

The prompt is rendered by :func:`~gymforge.testing.openai_server.fake.render_prompt` and the
completion by :func:`~gymforge.testing.openai_server.fake.render_completion`, one token per
UTF-8 byte; a stop string ends the text (its tokens stay in ``token_ids``), ``max_tokens``
cuts it (``finish_reason`` ``length``; an ask the context cannot hold is refused in vLLM's
wordings), and ``noncanonical_grammar`` tokenises a parallel tool call with the forced
tokens vLLM's hermes grammar produces. The response has ``choices[0].logprobs.content``
when asked, and vLLM's ``prompt_token_ids`` and ``choices[0].token_ids`` with
``return_token_ids`` (unless the server leaves them out).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from gymforge.testing.openai_server.fake import (
    FORCED_TOKENS,
    Responder,
    ServedReply,
    apply_stop,
    fake_detokenize,
    fake_logprob,
    fake_tokenize,
    forced_tokenize,
    render_completion,
    render_prompt,
    vllm_max_tokens,
)


def chat_completion(
    responder: Responder,
    req: dict[str, Any],
    model: str,
    max_context: int | None,
    malformed: bool = False,
    *,
    noncanonical_grammar: bool = False,
    serve_prompt_ids: bool = True,
    serve_completion_ids: bool = True,
) -> dict[str, Any]:
    """The vLLM-shaped response for request ``req`` (raises ServedError)."""
    reply = responder(req)
    if isinstance(reply, str):
        reply = ServedReply(content=reply)
    prompt_text = render_prompt(req["messages"], req.get("tools"))
    prompt_ids = fake_tokenize(prompt_text)
    asked = req.get("max_tokens") or req.get("max_completion_tokens")
    max_tokens = vllm_max_tokens(len(prompt_ids), asked, max_context, None)
    digest = hashlib.sha256(prompt_text.encode()).hexdigest()[:16]
    calls = [
        {
            "id": f"chatcmpl-tool-{digest}{k}",
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": (c.arguments_text()[:-1] or "{") if malformed else c.arguments_text(),
            },
        }
        for k, c in enumerate(reply.tool_calls)
    ]
    content = reply.content
    if malformed and not calls:
        content = (content or "") + '<tool_call>{"name": "x", "arguments": {'
    finish = reply.finish_reason or ("tool_calls" if calls else "stop")
    stop_reason: str | None = None
    generated = render_completion(content, calls)
    if req.get("stop") and not calls:
        include = bool(req.get("include_stop_str_in_output"))
        content, cut, stop_reason = apply_stop(generated, req["stop"], include)
        generated = generated[:cut]  # the stop string's tokens stay in token_ids
    grammar = noncanonical_grammar and calls and "parallel_tool_calls" in req
    tokenize = forced_tokenize if grammar else fake_tokenize
    completion_ids = tokenize(generated)
    if len(completion_ids) > max_tokens:
        completion_ids = completion_ids[:max_tokens]
        content = bytes(completion_ids).decode("utf-8", errors="ignore")
        calls, finish = [], "length"
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "tool_calls": calls},
        "logprobs": None,
        "finish_reason": finish,
        "stop_reason": stop_reason,
    }
    if req.get("logprobs"):
        choice["logprobs"] = {
            "content": _logprobs(
                completion_ids,
                int(req.get("top_logprobs") or 0),
                bool(req.get("return_tokens_as_token_ids")),
            )
        }
    out: dict[str, Any] = {
        "id": f"chatcmpl-{digest}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.get("model") or model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(completion_ids),
            "total_tokens": len(prompt_ids) + len(completion_ids),
        },
        "prompt_logprobs": None,
    }
    if req.get("return_token_ids") and serve_prompt_ids:
        out["prompt_token_ids"] = prompt_ids
    if req.get("return_token_ids") and serve_completion_ids:
        choice["token_ids"] = completion_ids
    return out


def _logprobs(ids: list[int], top: int, as_ids: bool) -> list[dict[str, Any]]:
    forced = FORCED_TOKENS

    def entry(tid: int, pos: int) -> dict[str, Any]:
        token = f"token_id:{tid}" if as_ids else fake_detokenize([tid])
        logprob = 0.0 if tid in forced else fake_logprob(tid, pos)  # forced: not sampled
        return {"token": token, "logprob": logprob, "bytes": list(token.encode())}

    return [
        {**entry(t, i), "top_logprobs": [entry((t + j) % 256, i) for j in range(top)]}
        for i, t in enumerate(ids)
    ]
