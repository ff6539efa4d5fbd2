"""The fake model of the test server: replies, responders, tokenisation and the chat
template (no model: every UTF-8 byte is one token).

- :func:`fake_tokenize` is the canonical tokenisation (id = byte value);
  :data:`FORCED_TOKENS` are extra ids (>= 256) for multi-byte pieces that canonical
  tokenisation never produces: what a tool-call grammar forces (see the server's
  ``noncanonical_grammar``);
- :func:`render_prompt` is the fake chat template; :func:`parse_prompt` reads a rendered
  prompt back into messages, so responders written for chat requests also answer token-id
  completions;
- :func:`apply_stop` cuts a completion at its first stop string the way vLLM does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

CONTEXT_FAULTS = frozenset(
    {"context", "context-zero", "context-at-least", "context-too-large", "context-openai"}
)
"""Faults that refuse a request because the context is full, each in one engine's wording
(:func:`context_refusal`)."""
FAULTS = (
    frozenset({"429", "500", "503", "drop", "reset", "malformed"})
    | frozenset({"429-retry-after", "not-json", "no-choices"})
    | CONTEXT_FAULTS
)
VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS = 16
"""What vLLM's completions endpoint generates when a request sends no ``max_tokens``."""


@dataclass(frozen=True)
class ServedToolCall:
    """A tool call the fake model makes. ``arguments`` may be a dict or raw (possibly bad)
    JSON text, sent verbatim."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class ServedReply:
    """What the fake model answers: text, structured tool calls, or both."""

    content: str | None = None
    tool_calls: tuple[ServedToolCall, ...] = ()
    finish_reason: str | None = None  # default: "tool_calls" if tool_calls else "stop"


class ServedError(Exception):
    """Raised by a responder to answer with an HTTP error in OpenAI's error shape."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


Responder = Callable[[dict[str, Any]], "ServedReply | str"]


def echo_responder(request: dict[str, Any]) -> ServedReply:
    """Replies with the text of the last message."""
    messages = request.get("messages") or [{}]
    return ServedReply(content="echo: " + _content_text(messages[-1].get("content")))


def scripted_responder(replies: Sequence[ServedReply | str]) -> Responder:
    """Answers turn k of a conversation (k = assistant messages already in it) with
    ``replies[k]`` (the last one repeats). Stateless, so concurrent conversations work."""
    if not replies:
        raise ValueError("scripted_responder needs at least one reply")

    def respond(request: dict[str, Any]) -> ServedReply | str:
        k = sum(m.get("role") == "assistant" for m in request.get("messages", []))
        reply: ServedReply | str = replies[min(k, len(replies) - 1)]
        return reply

    return respond


# ---- fake tokenisation ------------------------------------------------------------------
def fake_tokenize(text: str) -> list[int]:
    """One token per UTF-8 byte: the id is the byte value."""
    return list(text.encode("utf-8"))


def fake_logprob(token_id: int, position: int) -> float:
    """A deterministic, exactly representable logprob for ``token_id`` at ``position``."""
    return -((token_id * 31 + position * 7) % 97) / 16.0


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def render_completion(content: str | None, tool_calls: Sequence[dict[str, Any]] = ()) -> str:
    """The raw text a Hermes-style model would emit: content, then one ``<tool_call>``
    block per call with its arguments text verbatim."""
    parts = [content or ""]
    for call in tool_calls:
        fn = call.get("function", call)
        parts.append(
            f'<tool_call>{{"name": {json.dumps(fn.get("name"))}, '
            f'"arguments": {fn.get("arguments") or "{}"}}}</tool_call>'
        )
    return "".join(parts)


def render_prompt(
    messages: Sequence[dict[str, Any]],
    tools: Sequence[Any] | None = None,
    add_generation_prompt: bool = True,
) -> str:
    """The fake chat template: a tools header, every message, then the generation prompt."""
    out = []
    if tools:
        out.append("<|tools|>" + json.dumps(list(tools)) + "<|end|>\n")  # like tojson
    for m in messages:
        body = _content_text(m.get("content"))
        if m.get("role") == "assistant":
            body = render_completion(body, m.get("tool_calls") or ())
        if m.get("tool_call_id"):
            body = f"[{m['tool_call_id']}]" + body
        out.append(f"<|{m.get('role')}|>{body}<|end|>\n")
    return "".join(out) + ("<|assistant|>" if add_generation_prompt else "")


EOS = "<|end|>"
"""The fake template's end of turn; token-id completions end with its tokens, as vLLM's
``token_ids`` end with the EOS id."""
FORCED_TOKENS = {256: "<tool_call>", 257: "</tool_call>", 258: '{"name": ', 259: '"arguments": '}
_FORCED_IDS = {text: tid for tid, text in FORCED_TOKENS.items()}
_FORCED_SPLIT = re.compile("(" + "|".join(map(re.escape, _FORCED_IDS)) + ")")


def forced_tokenize(text: str) -> list[int]:
    """A non-canonical tokenisation of ``text``: each :data:`FORCED_TOKENS` piece as one id."""
    ids: list[int] = []
    for part in _FORCED_SPLIT.split(text):
        if part in _FORCED_IDS:
            ids.append(_FORCED_IDS[part])
        elif part:
            ids += fake_tokenize(part)
    return ids


def fake_detokenize(ids: Sequence[int]) -> str:
    """The text of fake token ids (forced ids included); bad bytes are replaced."""
    out, run = [], bytearray()
    for tid in ids:
        if tid in FORCED_TOKENS:
            out.append(run.decode("utf-8", errors="replace"))
            run = bytearray()
            out.append(FORCED_TOKENS[tid])
        else:
            run.append(tid & 0xFF)
    out.append(run.decode("utf-8", errors="replace"))
    return "".join(out)


_TURN = re.compile(r"<\|(system|user|assistant|tool|tools)\|>(.*?)<\|end\|>\n", re.S)
_CALL_ID = re.compile(r"\[([^\]]*)\]", re.S)


def parse_prompt(text: str) -> dict[str, Any]:
    """The ``messages`` (and ``tools``) of a prompt :func:`render_prompt` made."""
    messages: list[dict[str, Any]] = []
    tools: Any = None
    for role, body in _TURN.findall(text):
        if role == "tools":
            try:
                tools = json.loads(body)
            except ValueError:
                tools = None
            continue
        message: dict[str, Any] = {"role": role, "content": body}
        if role == "tool" and (m := _CALL_ID.match(body)):
            message = {"role": role, "content": body[m.end() :], "tool_call_id": m.group(1)}
        messages.append(message)
    return {"messages": messages, "tools": tools}


def apply_stop(text: str, stop: Any, include: bool) -> tuple[str, int, str | None]:
    """``(text, cut, stop_string)``: vLLM's stop-string handling. The completion ends at the
    end of the first stop string it contains (``cut`` characters of ``text`` generated);
    the returned text keeps the stop string only when ``include``. No stop: ``cut`` is
    ``len(text)`` and ``stop_string`` None."""
    stops = [stop] if isinstance(stop, str) else [s for s in stop or () if isinstance(s, str)]
    hits = [(i, s) for s in stops if s and (i := text.find(s)) >= 0]
    if not hits:
        return text, len(text), None
    i, s = min(hits)
    return (text[: i + len(s)] if include else text[:i]), i + len(s), s


# ---- "the context is full", as engines word it -----------------------------------------
def context_refusal(kind: str, prompt: int, asked: int | None) -> tuple[str, str | None]:
    """``(message, code)`` of a 400 refusing a ``prompt``-token request that asked for
    ``asked`` completion tokens (None: not sent), in the wording of ``kind``:

    - ``context``: older vLLM (and OpenAI's) "you requested T tokens (P in the messages, C
      in the completion)", the prompt alone one token over the context;
    - ``context-zero``: vLLM when the prompt is exactly as long as the context and no
      ``max_tokens`` was sent (its default is clamped to 0);
    - ``context-at-least``: vLLM >= 0.10 when the prompt alone overflows the context;
    - ``context-too-large``: vLLM when ``max_tokens`` is more than the room left (here the
      room is one token less than was asked);
    - ``context-openai``: OpenAI's ``context_length_exceeded`` code.
    """
    completion = asked if asked is not None else VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS
    if kind == "context":
        return vllm_requested_message(prompt, completion, max(prompt - 1, 1)), None
    if kind == "context-zero":
        return "max_tokens must be at least 1, got 0.", None
    if kind == "context-at-least":
        return vllm_at_least_message(prompt - 1, prompt), None
    if kind == "context-too-large":
        return vllm_too_large_message(completion, prompt + completion - 1, prompt), None
    if kind == "context-openai":
        return (
            f"This model's maximum context length is {max(prompt - 1, 1)} tokens. However, "
            f"your messages resulted in {prompt} tokens. Please reduce the length of the "
            "messages.",
            "context_length_exceeded",
        )
    raise ValueError(f"unknown context fault {kind!r}; known: {sorted(CONTEXT_FAULTS)}")


def vllm_requested_message(prompt: int, completion: int, limit: int) -> str:
    return (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
        "completion). Please reduce the length of the messages or completion."
    )


def vllm_at_least_message(limit: int, prompt: int) -> str:
    return (
        f"This model's maximum context length is {limit} tokens. However, your prompt "
        f"contains at least {prompt} input tokens, which exceeds this limit even without "
        "any output tokens. Please reduce the length of the input prompt."
    )


def vllm_too_large_message(asked: int, limit: int, prompt: int) -> str:
    return (
        f"'max_tokens' or 'max_completion_tokens' is too large: {asked}. This model's "
        f"maximum context length is {limit} tokens and your request has {prompt} input "
        f"tokens ({asked} > {limit} - {prompt})."
    )


def vllm_max_tokens(prompt: int, asked: int | None, limit: int | None, default: int | None) -> int:
    """The completion length vLLM grants a ``prompt``-token request that asked for
    ``asked`` tokens (None: ``default``, or the rest of the context when that is None too)
    in a ``limit``-token context (None: unbounded), or :class:`ServedError` with vLLM's
    wording when the context is full or the ask too large."""
    if limit is not None and prompt > limit:
        raise ServedError(400, vllm_at_least_message(limit, prompt))
    room = None if limit is None else limit - prompt
    if asked is None:
        grant = default if room is None else min(default or room, room)
        if grant is None:
            return 1 << 30
        if grant < 1:
            raise ServedError(400, f"max_tokens must be at least 1, got {grant}.")
        return grant
    if room is not None and asked > room:
        raise ServedError(400, vllm_too_large_message(asked, limit or 0, prompt))
    return asked
