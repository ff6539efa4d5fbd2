"""Which chat requests the proxy serves: an allow-list of fields, each type-checked.

The proxy records every turn as a sample of the model's own distribution (exact prompt and
completion ids, the sampled tokens' logprobs), and training exports use those tokens as the
policy's. A request field that constrains or re-weights sampling (``logit_bias``, guided
decoding ``guided_*``, ``structured_outputs``, ``allowed_token_ids``, ``bad_words``,
``min_tokens``, ``ignore_eos``, presence/frequency/repetition penalties, a
``response_format`` other than text, a forced ``tool_choice``...) would make the recorded
tokens something the model did not choose; so the proxy forwards only the fields listed here
and refuses any other with a 400 that names it. A field of the wrong type or out of range
is a 400 too, never a server error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], str | None]
"""A field's check: ``None`` when the value is fine, else what is wrong with it."""


def _number(lo: float | None = None, hi: float | None = None) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return "must be a number"
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            return f"must be between {lo} and {hi}"
        return None

    return check


def _integer(lo: int | None = None, hi: int | None = None) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return "must be an integer"
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            return f"must be between {lo} and {'any' if hi is None else hi}"
        return None

    return check


def _kind(*types: type) -> Check:
    names = " or ".join("null" if t is type(None) else t.__name__ for t in types)

    def check(v: Any) -> str | None:
        if isinstance(v, bool) and bool not in types:
            return f"must be {names}"
        return None if isinstance(v, types) else f"must be {names}"

    return check


def _messages(v: Any) -> str | None:
    if not isinstance(v, list) or not all(isinstance(m, dict) for m in v):
        return "must be a list of message objects"
    return None


def _tools(v: Any) -> str | None:
    if v is not None and (not isinstance(v, list) or not all(isinstance(t, dict) for t in v)):
        return "must be a list of tool objects"
    return None


def _stop(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return None
    if isinstance(v, list) and all(isinstance(s, str) for s in v):
        return None
    return "must be a string or a list of strings"


def _n(v: Any) -> str | None:
    problem = _integer(1)(v)
    if problem is not None:
        return problem
    return None if v == 1 else "must be 1: a turn is one sample (n > 1 is not supported)"


def _tool_choice(v: Any) -> str | None:
    if v is None or v in ("auto", "none"):
        return None
    return (
        "must be 'auto' or 'none': a forced tool call is decoded under a grammar, so its "
        "tokens would not be the model's own choice"
    )


def _response_format(v: Any) -> str | None:
    if v is None or (isinstance(v, dict) and v.get("type") == "text" and len(v) == 1):
        return None
    return (
        "only {'type': 'text'} is forwarded: JSON modes and schemas are decoded under a "
        "grammar, so their tokens would not be the model's own choice"
    )


FIELDS: dict[str, Check] = {
    "model": _kind(str),
    "messages": _messages,
    "tools": _tools,
    "tool_choice": _tool_choice,
    "parallel_tool_calls": _kind(bool, type(None)),
    "response_format": _response_format,
    "stream": _kind(bool, type(None)),
    "stream_options": _kind(dict, type(None)),
    "n": _n,
    "max_tokens": _integer(1),
    "max_completion_tokens": _integer(1),
    "temperature": _number(0),
    "top_p": _number(0, 1),
    "top_k": _integer(-1),
    "min_p": _number(0, 1),
    "seed": _integer(),
    "stop": _stop,
    "logprobs": _kind(bool, type(None)),
    "top_logprobs": _integer(0, 20),
    "return_token_ids": _kind(bool, type(None)),
    "user": _kind(str, type(None)),
}
"""Every field the proxy forwards, with its check. ``model`` and ``messages`` are required."""


def chat_problem(body: dict[str, Any]) -> str | None:
    """Why the proxy refuses chat request ``body`` (``None``: it serves it)."""
    for required in ("model", "messages"):
        if required not in body:
            return f"'{required}' is required"
    for name, value in body.items():
        check = FIELDS.get(name)
        if check is None:
            return (
                f"field {name[:80]!r} is not forwarded: the proxy records each turn as the "
                "model's own sample, and only these fields keep it so: " + ", ".join(FIELDS)
            )
        if value is None and name not in ("model", "messages"):
            continue
        problem = check(value)
        if problem is not None:
            return f"{name!r} {problem}"
    return None
