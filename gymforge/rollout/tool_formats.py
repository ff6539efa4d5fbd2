"""Tool calls in raw generated text, by the model's format (token-in policies parse text).

Formats, detected from how the chat template renders an assistant tool call
(:func:`detect_format`) and overridable with ``--tool-format``:

- ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks (ChatML /
  Qwen / Hermes models); parsed by :func:`gymforge.rollout.parsing.parse_text`, rules and
  all (one call per turn, strict JSON, ``<think>`` ignored);
- ``llama3_json``: the whole reply is one JSON object ``{"name": ..., "parameters": {...}}``
  (``arguments`` accepted too), optionally after ``<|python_tag|>`` (Llama 3.x);
- ``none``: every completion is a reply.

:func:`parse_completion` never raises: a reply that starts like a call but is not a valid
one becomes ``Invalid`` and takes the environment's malformed-output path.
"""

from __future__ import annotations

import json
from typing import Literal

from gymforge.core.types import Action, Invalid, Reply, ToolCall
from gymforge.rollout.parsing import MAX_ERROR_CHARS, make_call, parse_text

ToolFormat = Literal["hermes", "llama3_json", "none"]
FORMATS: tuple[ToolFormat, ...] = ("hermes", "llama3_json", "none")
_PYTHON_TAG = "<|python_tag|>"


def detect_format(rendered_call: str) -> ToolFormat:
    """The format of a chat template from its rendering of one assistant tool call."""
    if "<tool_call>" in rendered_call:
        return "hermes"
    if '"parameters"' in rendered_call or _PYTHON_TAG in rendered_call:
        return "llama3_json"
    return "hermes"


def parse_completion(text: str, fmt: ToolFormat, call_id: str) -> Action:
    """The action of one generated completion in format ``fmt``. Never raises."""
    if fmt == "hermes":
        return parse_text(text, call_id)
    if fmt == "none" or not isinstance(text, str):
        return Reply(text=text if isinstance(text, str) else repr(text))
    return _llama3(text, call_id)


def _llama3(text: str, call_id: str) -> Action:
    body = text.strip()
    tagged = body.startswith(_PYTHON_TAG)
    if tagged:
        body = body[len(_PYTHON_TAG) :].strip()
    if not body.startswith("{"):
        return Reply(text=text)
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError) as err:
        if tagged or body.startswith('{"name"'):
            return Invalid(raw=text, error=f"tool call is not valid JSON: {str(err)[:200]}")
        return Reply(text=text)
    if not isinstance(obj, dict) or "name" not in obj:
        return Reply(text=text)
    made = make_call(obj.get("name"), obj.get("parameters", obj.get("arguments")), call_id)
    if isinstance(made, ToolCall):
        return made
    return Invalid(raw=text, error=made[:MAX_ERROR_CHARS])
