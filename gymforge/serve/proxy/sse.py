"""Chat completions as server-sent events, both ways, in vLLM's shape.

:func:`stream_chunks` splits one ``chat.completion`` response into the ``chat.completion.chunk``
objects a streaming server sends for it: a first chunk with the role (and vLLM's top-level
``prompt_token_ids``), content in pieces of ``piece`` tokens (each with its ``token_ids`` and
``logprobs.content`` entries), tool calls (name first, then the arguments), a last chunk
with the finish reason, and a usage chunk when asked. :func:`merge_chunks` is its inverse:
the response a stream amounts to, which is what the proxy records of a streamed request.
:func:`encode` and :func:`decode_lines` are the ``data: ...`` framing, and :func:`respond`
sends a whole response as a stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from aiohttp import web

DONE = b"data: [DONE]\n\n"


def encode(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


async def respond(
    request: web.Request, response: dict[str, Any], body: dict[str, Any]
) -> web.StreamResponse:
    """Send ``response`` to ``request`` as the event stream a streaming server sends for it
    (a usage chunk when ``body`` asks ``stream_options.include_usage``)."""
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await out.prepare(request)
    for chunk in stream_chunks(response, include_usage=include_usage):
        await out.write(encode(chunk))
    await out.write(DONE)
    await out.write_eof()
    return out


def decode_lines(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The JSON chunks of an event stream's lines (``[DONE]``, comments and blanks skipped)."""
    for line in lines:
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            return
        chunk = json.loads(data)
        if isinstance(chunk, dict):
            yield chunk


def _pieces(seq: list[Any], size: int) -> list[list[Any]]:
    return [seq[i : i + size] for i in range(0, len(seq), size)] or [[]]


def stream_chunks(
    response: dict[str, Any], piece: int = 8, include_usage: bool = False
) -> Iterator[dict[str, Any]]:
    """The chunks a streaming server sends for ``response`` (one choice)."""
    choice = response["choices"][0]
    message = choice.get("message") or {}
    head = {
        "id": response.get("id"),
        "object": "chat.completion.chunk",
        "created": response.get("created"),
        "model": response.get("model"),
    }

    def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        c: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        c.update(extra)
        return {**head, "choices": [c]}

    first = chunk({"role": "assistant", "content": ""})
    if "prompt_token_ids" in response:
        first["prompt_token_ids"] = response["prompt_token_ids"]
    yield first
    ids = choice.get("token_ids")
    entries = ((choice.get("logprobs") or {}).get("content")) or []
    content = message.get("content") or ""
    text_ids = _pieces(ids, piece) if isinstance(ids, list) else None
    n = len(text_ids) if text_ids is not None else max(1, -(-len(content) // (4 * piece)))
    step = -(-len(content) // n) if content else 0
    for i in range(n):
        extra: dict[str, Any] = {}
        if text_ids is not None:
            extra["token_ids"] = text_ids[i]
        if entries:
            lo = sum(len(p) for p in text_ids[:i]) if text_ids is not None else i * piece
            hi = lo + (len(text_ids[i]) if text_ids is not None else piece)
            extra["logprobs"] = {"content": entries[lo:hi]}
        text = content[i * step : (i + 1) * step] if step else ""
        yield chunk({"content": text} if text or extra else {}, **extra)
    for k, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": k,
                        "id": call.get("id"),
                        "type": "function",
                        "function": {"name": fn.get("name"), "arguments": ""},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": k, "function": {"arguments": fn.get("arguments")}}]})
    yield chunk({}, finish_reason=choice.get("finish_reason"))
    if include_usage and response.get("usage") is not None:
        yield {**head, "choices": [], "usage": response["usage"]}


def merge_chunks(chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` a stream of chunks amounts to (first choice only)."""
    out: dict[str, Any] = {"object": "chat.completion", "choices": []}
    content: list[str] = []
    ids: list[int] | None = None
    entries: list[dict[str, Any]] | None = None
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for c in chunks:
        for key in ("id", "created", "model"):
            if c.get(key) is not None:
                out.setdefault(key, c[key])
        if "prompt_token_ids" in c:
            out["prompt_token_ids"] = c["prompt_token_ids"]
        if c.get("usage") is not None:
            out["usage"] = c["usage"]
        for choice in c.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                content.append(delta["content"])
            if isinstance(choice.get("token_ids"), list):
                ids = (ids or []) + choice["token_ids"]
            lp = (choice.get("logprobs") or {}).get("content")
            if isinstance(lp, list):
                entries = (entries or []) + lp
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    int(tc.get("index", 0)),
                    {"id": None, "type": "function", "function": {"name": None, "arguments": ""}},
                )
                if tc.get("id"):
                    slot["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    slot["function"]["name"] = fn["name"]
                slot["function"]["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason") is not None:
                finish = choice["finish_reason"]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) or None,
        "tool_calls": [calls[k] for k in sorted(calls)],
    }
    choice_out: dict[str, Any] = {
        "index": 0,
        "message": message,
        "logprobs": {"content": entries} if entries is not None else None,
        "finish_reason": finish,
    }
    if ids is not None:
        choice_out["token_ids"] = ids
    out["choices"] = [choice_out]
    return out
