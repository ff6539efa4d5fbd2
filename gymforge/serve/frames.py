"""Decoding one client frame into a JSON object, within bounds, never raising.

A frame is refused (``FrameError``: a fatal error code, a message and the close code) when
it is over ``max_message_bytes`` (``too_large``, close 1009), is not UTF-8 JSON or not an
object (``bad_json``, close 1007), or nests lists/objects deeper than ``MAX_DEPTH``
(``too_deep``, close 1007). Nesting is bounded before anything walks the value: the JSON
decoder's own recursion limit becomes ``too_deep`` instead of a RecursionError escaping
the session, and a value under that limit but deeper than ``MAX_DEPTH`` is measured with
an explicit stack (and only when the frame holds more brackets than ``MAX_DEPTH``, so
ordinary messages pay two ``str.count`` calls).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gymforge.core.types import MAX_NESTING
from gymforge.serve import protocol as p
from gymforge.serve.wire import loads

MAX_DEPTH = MAX_NESTING + 16
"""Deepest nesting a message may have: action arguments nest at most ``MAX_NESTING``
levels, and the message around them adds a few."""


@dataclass(frozen=True)
class FrameError:
    """Why a frame is not a message, and how the session ends."""

    code: p.ErrorCode
    message: str
    close_code: int


def decode_frame(raw: str | bytes, max_bytes: int) -> dict[str, Any] | FrameError:
    """The JSON object of ``raw``, or why there is none (see the module docstring)."""
    size = len(raw)
    if isinstance(raw, str) and 4 * size > max_bytes:
        size = len(raw.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        text = f"{size} bytes > max_message_bytes {max_bytes}; not processed"
        return FrameError("too_large", text, p.CLOSE_TOO_BIG)
    try:
        data = loads(raw)  # json.loads's value and errors
    except RecursionError:
        return _too_deep()
    except (ValueError, UnicodeDecodeError) as err:
        return FrameError("bad_json", f"not JSON: {str(err)[:200]}", p.CLOSE_BAD_DATA)
    if not isinstance(data, dict):
        return FrameError("bad_json", "a message must be a JSON object", p.CLOSE_BAD_DATA)
    brackets = raw.count("[") + raw.count("{") if isinstance(raw, str) else _count(raw)
    if brackets > MAX_DEPTH and depth(data) > MAX_DEPTH:
        return _too_deep()
    return data


def depth(value: Any) -> int:
    """How deeply ``value``'s lists and dicts nest (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _count(raw: bytes) -> int:
    return raw.count(b"[") + raw.count(b"{")


def _too_deep() -> FrameError:
    text = f"nested deeper than {MAX_DEPTH} levels; not processed"
    return FrameError("too_deep", text, p.CLOSE_BAD_DATA)
