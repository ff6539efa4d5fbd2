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

FAULTS = frozenset({"429", "500", "503", "drop", "reset", "malformed", "context"})


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
