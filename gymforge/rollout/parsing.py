"""Model output to exactly one gymforge action: tool-call parsing for chat completions.

Contract: :func:`parse_assistant_message` and :func:`parse_text` never raise. Whatever a
model emits becomes a ``ToolCall``, a ``Reply`` or an ``Invalid`` (raw text plus the parse
error), so anything unparseable takes the environment's malformed-output path.

Rules, in order:

1. **Structured calls** (``message.tool_calls``, what vLLM/SGLang with a tool parser and
   hosted APIs return): each must be ``type: "function"`` with a non-empty string ``name``
   and ``arguments`` that are a JSON *object* (given as JSON text, as OpenAI sends it; an
   already-decoded object and empty text, meaning ``{}``, are accepted too). JSON is strict:
   ``NaN``/``Infinity``, nesting deeper than ``MAX_NESTING`` and oversized integers are
   refused. The call keeps the server's ``id`` as ``ToolCall.call_id``; message ``content``
   next to the calls is kept in the transcript but is not an action.
2. **Text calls** (raw-completion models, servers without a tool parser): a
   ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block in the content
   (``parameters`` is accepted for ``arguments``, and arguments may be JSON text). A final
   block without its closing tag is accepted when its JSON is complete (``</tool_call>``
   used as a stop string). Blocks inside ``<think>...</think>`` are ignored. The call id is
   the caller's ``call_id``.
3. Otherwise the content is a ``Reply`` (possibly empty).

**More than one tool call in one turn is ``Invalid``** ("N tool calls in one turn"). The
environment contract is one action per step; executing only the first would either hide
the other calls from the record or make the policy invent tool results no record shows.
As ``Invalid`` the attempt is visible in the trajectory (``action.error``,
``info["malformed"]``) and the environment's ``MalformedPolicy`` decides (by default the
model is told to call one tool at a time). ``parallel_tool_calls`` is not sent unless
opted into (:class:`gymforge.rollout.server.Sampling` says why).

Each parse also returns the assistant message to append to the conversation. A valid
structured call is echoed verbatim (content, ids, name, arguments text) so the next
request is the exact transcript. Every other turn is echoed as plain ``content``. For an
invalid structured call, that content is ``Invalid.raw``: the content followed by one
``<tool_call>`` block per call, with the arguments text verbatim. This keeps the transcript
valid for strict servers, which reject a ``tool_calls`` message that no tool result answers.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gymforge.core.built import dataclass_made
from gymforge.core.errors import UserError
from gymforge.core.policy import CaptureLevel
from gymforge.core.types import Action, Invalid, Message, ToolCall, not_json
from gymforge.kit.made import reply_of

_TOOL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_TOKEN_ID = re.compile(r"token_id:(\d+)")
MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class ParsedTurn:
    """The action of one completion and the assistant message that records it."""

    action: Action
    assistant_message: dict[str, Any]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )


def load_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Decode tool-call arguments: ``(arguments, None)`` or ``(None, error)``. Never raises."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    if not isinstance(raw, str):
        return None, f"tool call arguments must be JSON text, got {type(raw).__name__}"
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:
        return None, f"tool call arguments are not valid JSON: {str(err)[:200]}"
    if not isinstance(value, dict):
        return None, f"tool call arguments must be a JSON object, got {_json_type(value)}"
    return value, None


def make_call(name: Any, arguments: Any, call_id: str) -> ToolCall | str:
    """A ``ToolCall``, or the error text saying why there is none."""
    if not isinstance(name, str) or not name.strip():
        return "tool call has no function name"
    args, error = load_arguments(arguments)
    if error is not None:
        return error
    try:
        return ToolCall(name=name, arguments=args or {}, call_id=call_id)
    except Exception as err:  # refused by validation: NaN, nesting, ...
        return f"tool call refused: {str(err).splitlines()[0][:200]}"


def _render_call(name: Any, arguments: Any) -> str:
    if isinstance(arguments, str):
        args_text = arguments
    else:
        try:
            args_text = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            args_text = str(arguments)
    name_text = json.dumps(name if isinstance(name, str) else str(name), ensure_ascii=False)
    return f'<tool_call>{{"name": {name_text}, "arguments": {args_text}}}</tool_call>'


def _invalid(raw: str, error: str) -> Invalid:
    return Invalid(raw=raw, error=error[:MAX_ERROR_CHARS])


def parse_text(text: str, call_id: str = "call_0") -> Action:
    """Rule 2 and 3 of the module docstring on raw model text. Never raises."""
    if not isinstance(text, str):
        return _invalid(repr(text)[:2000], f"model output is not text: {type(text).__name__}")
    visible = _THINK.sub("", text) if "<think>" in text else text
    if "<tool_call>" not in visible:
        return reply_of(text)
    blocks = _TOOL_BLOCK.findall(visible)
    if len(blocks) > 1:
        return _invalid(text, f"{len(blocks)} tool calls in one turn; call one tool per turn")
    body = blocks[0].strip()
    try:
        obj = json.loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:
        return _invalid(text, f"<tool_call> block is not valid JSON: {str(err)[:200]}")
    if not isinstance(obj, dict):
        return _invalid(text, f"<tool_call> block must hold a JSON object, got {_json_type(obj)}")
    arguments = obj.get("arguments", obj.get("parameters"))
    call = make_call(obj.get("name"), arguments, call_id)
    return call if isinstance(call, ToolCall) else _invalid(text, call)


def _structured(content: str | None, calls: list[Any], call_id: str) -> ParsedTurn:
    names, texts = [], []
    for c in calls:
        fn = c.get("function") if isinstance(c, Mapping) else None
        fn = fn if isinstance(fn, Mapping) else {}
        names.append(fn.get("name"))
        texts.append(_render_call(fn.get("name"), fn.get("arguments")))
    raw = (content or "") + "".join(texts)
    echo_as_text = {"role": "assistant", "content": raw}
    if len(calls) > 1:
        error = f"{len(calls)} tool calls in one turn; call one tool per turn"
        return ParsedTurn(_invalid(raw, error), echo_as_text)
    call = calls[0]
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return ParsedTurn(_invalid(raw, "tool call has no function"), echo_as_text)
    if call.get("type", "function") != "function":
        error = f"unsupported tool call type {str(call.get('type'))[:50]!r}"
        return ParsedTurn(_invalid(raw, error), echo_as_text)
    server_id = call.get("id")
    cid = server_id if isinstance(server_id, str) and server_id else call_id
    fn = call["function"]
    made = make_call(fn.get("name"), fn.get("arguments"), cid)
    if not isinstance(made, ToolCall):
        return ParsedTurn(_invalid(raw, made), echo_as_text)
    arguments = fn.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(made.arguments, ensure_ascii=False)
    echo = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": fn["name"], "arguments": arguments},
            }
        ],
    }
    return ParsedTurn(made, echo)


def parse_assistant_message(
    message: Any, call_id: str = "call_0", *, text_tool_calls: bool = True
) -> ParsedTurn:
    """Parse ``choices[0].message`` of a chat completion (as a JSON dict). Never raises.

    ``call_id`` names a text-form call (and a structured call without an id);
    ``text_tool_calls=False`` turns rule 2 off (content is then always a reply).
    """
    if not isinstance(message, Mapping):
        raw = repr(message)[:2000]
        return ParsedTurn(
            _invalid(raw, "completion has no message"), {"role": "assistant", "content": raw}
        )
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    if content is not None and not isinstance(content, str):
        content = str(content)
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        return _structured(content, calls, call_id)
    text = content or ""
    action = parse_text(text, call_id) if text_tool_calls else reply_of(text)
    made = {"action": action, "assistant_message": {"role": "assistant", "content": text}}
    return dataclass_made(ParsedTurn, made)  # ParsedTurn(action, message), without setattrs


def message_dict(m: Message) -> dict[str, Any]:
    """An observation message in OpenAI request shape (tool results carry their call id)."""
    if m.role == "tool":
        return {"role": "tool", "content": m.content, "tool_call_id": m.tool_call_id or ""}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.name:
        out["name"] = m.name
    return out


class ToolsNotJson(UserError):
    """The environment offered tools that JSON cannot carry: no request can send them, in
    any episode, so no retry helps (a mistake: the run stops, naming the value)."""


def tools_not_json(tools: Any) -> ToolsNotJson | None:
    """The error naming where ``tools`` holds what JSON cannot carry, or None when they are
    JSON (asked only once encoding them failed: a walk of every schema per request would
    cost each turn what the encoding already checks)."""
    fault = not_json(tools, "tools")
    return None if fault is None else ToolsNotJson(f"the environment's tools are not JSON: {fault}")


# ---- token capture --------------------------------------------------------------------
_NUMBER = {int, float}
_LOGPROB = operator.itemgetter("logprob")


def _all_of(kind: type, items: list[Any]) -> bool:
    """Whether every item's type is exactly ``kind`` (subclasses, such as bool for int, are
    not): counted at C speed, as a reply can hold thousands of items."""
    return operator.countOf(map(type, items), kind) == len(items)


def int_list(value: Any) -> list[int] | None:
    """``value`` itself if it is a list of ints (never bools), else None."""
    if isinstance(value, list) and _all_of(int, value):
        return value
    return None


def _logprob_list(entries: list[dict[str, Any]]) -> list[float] | None:
    try:  # C-speed reads: a reply can hold thousands of entries
        values = list(map(_LOGPROB, entries))
    except KeyError:
        return None  # missing
    return finite_floats(values)


def finite_floats(values: list[Any]) -> list[float] | None:
    """``values`` as floats when each is an int or a float (never a bool) and their sum is
    finite (a sum of logprobs <= 0 is finite iff each is), else None: not a number, NaN or
    an infinity (JSON cannot hold them), or an integer past the largest float. A list of
    floats is ``values`` itself (what servers send: no conversion needed)."""
    if _all_of(float, values):
        return values if math.isfinite(sum(values)) else None
    if not set(map(type, values)) <= _NUMBER:
        return None
    try:
        floats = [float(v) for v in values]
    except OverflowError:  # an int past the largest float
        return None
    return floats if math.isfinite(sum(floats)) else None


Capture = tuple[CaptureLevel, list[int] | None, list[int] | None, list[float] | None]
""":func:`capture_fields` as a tuple, in its keys' order."""


def capture(data: Mapping[str, Any]) -> Capture:
    """:func:`capture_fields` as a tuple, in its keys' order."""
    choice = data["choices"][0]
    prompt_ids = int_list(data.get("prompt_token_ids"))
    completion_ids = int_list(choice.get("token_ids"))
    lp = choice.get("logprobs")
    entries = lp.get("content") if isinstance(lp, dict) else None
    logprobs: list[float] | None = None
    if isinstance(entries, list) and _all_of(dict, entries):
        logprobs = _logprob_list(entries)
        if completion_ids is None and entries:
            completion_ids = token_ids_of([e.get("token") for e in entries])
    return captured(prompt_ids, completion_ids, logprobs)


def chat_logprobs(lp: Any) -> list[float] | None:
    """A chat choice's ``logprobs.content[i].logprob``, as many as the server sent; None
    if any is missing or not finite, or the shape is not vLLM's."""
    entries = lp.get("content") if isinstance(lp, dict) else None
    if isinstance(entries, list) and _all_of(dict, entries):
        return _logprob_list(entries)
    return None


def token_ids_of(tokens: list[Any]) -> list[int] | None:
    """The ids that logprob ``tokens`` spell when every one reads ``token_id:<id>`` (vLLM's
    ``return_tokens_as_token_ids``), else None (also when an id has more digits than
    ``int()`` converts: an odd shape, never an error)."""
    matches = [_TOKEN_ID.fullmatch(str(t)) for t in tokens]
    if not all(matches):
        return None
    try:
        return [int(m.group(1)) for m in matches if m]
    except ValueError:
        return None


def captured(
    prompt_ids: list[int] | None, completion_ids: list[int] | None, logprobs: list[float] | None
) -> Capture:
    """The capture with its level: ``tokens`` when both id lists are present, else
    ``logprobs`` when the logprobs are, else ``text``."""
    level: CaptureLevel = "text"
    if prompt_ids is not None and completion_ids is not None:
        level = "tokens"
    elif logprobs is not None:
        level = "logprobs"
    return level, prompt_ids, completion_ids, logprobs


def capture_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The token fields of a chat-completion response, verbatim, and its capture level.

    - ``prompt_token_ids``: the response's top-level ``prompt_token_ids`` (vLLM);
    - ``completion_token_ids``: ``choices[0].token_ids``; failing that, the ids in the
      logprob tokens when every one reads ``token_id:<id>`` (``return_tokens_as_token_ids``);
    - ``logprobs``: ``choices[0].logprobs.content[i].logprob``; None if any is missing or
      not finite (JSON cannot hold it);
    - ``capture_level``: ``tokens`` when both id lists are present (logprobs recorded too
      when present), else ``logprobs`` when the logprobs are, else ``text``.

    Values are never re-tokenised or converted (ints stay ints). Never raises on odd shapes:
    a field that is not what vLLM documents is recorded as None."""
    return dict(zip(_CAPTURE_KEYS, capture(data), strict=True))


_CAPTURE_KEYS = ("capture_level", "prompt_token_ids", "completion_token_ids", "logprobs")
