"""The commonest client message, a ``step`` with a ``reply`` action, built without pydantic.

``protocol.CLIENT_ADAPTER.validate_python`` checks a message against the union of every
message type, and the action against the union of every action, running the action's
scrub (``gymforge.core.types.scrub_text``) on the way: about a tenth of a small step's
server work. :func:`step_message` recognises the one shape an LLM's step most often has,
``{"type": "step", "action": {"kind": "reply", "text": ...}}`` with an optional ``id``
(``None``, an ``int`` within 64 bits or a ``str``) and ``state`` (a ``bool``), every value
of exactly its type (no subclass, no coercion), and builds the ``StepMsg`` validation
would build: the same field values (the text scrubbed the same way), in field order, and
the same fields set. Anything else (another key, another action, a value validation would
coerce or refuse) gives None, and the caller validates the message as before.
:func:`step_frame` does the same from the frame itself, read by orjson alone: see its
docstring for why ``frames.decode_frame``'s other checks cannot tell such a frame apart.
tests/serve/test_fast_step.py holds each equal to its slow path over generated messages and
frames.
"""

from __future__ import annotations

from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; every frame takes decode_frame
    orjson = None  # type: ignore[assignment]

from gymforge.core.built import _new, _set_extra, _set_fields_set, _set_private, _setattr
from gymforge.core.types import Reply, scrub_text
from gymforge.serve.protocol import StepMsg

_KEYS = frozenset({"type", "action", "id", "state"})
_ACTION_KEYS = frozenset({"kind", "text"})
_INT64 = 1 << 63


def step_message(data: dict[str, Any]) -> StepMsg | None:
    """The ``StepMsg`` that validating ``data`` gives, for a step with a reply action
    (module docstring); None for any other message."""
    kind = data.get("type")
    action = data.get("action")
    if (
        type(kind) is not str
        or kind != "step"
        or type(action) is not dict
        or len(action) != 2
        or not _KEYS.issuperset(data)
        or not _ACTION_KEYS.issuperset(action)
    ):
        return None
    text, tag = action["text"], action["kind"]
    msg_id = data.get("id")
    state = data.get("state", False)
    if (
        type(text) is not str
        or type(tag) is not str
        or tag != "reply"
        or type(state) is not bool
        or not (
            msg_id is None
            or type(msg_id) is str
            or (type(msg_id) is int and -_INT64 <= msg_id < _INT64)
        )
    ):
        return None
    if not text.isascii():
        text = scrub_text(text)
    reply = _new(Reply)
    _setattr(reply, "__dict__", {"kind": "reply", "text": text})
    _set_fields_set(reply, {"kind", "text"})
    _set_extra(reply, None)
    _set_private(reply, None)
    msg = _new(StepMsg)  # both made as ``core.built.built`` makes them, inline
    _setattr(msg, "__dict__", {"id": msg_id, "type": "step", "action": reply, "state": state})
    _set_fields_set(msg, set(data))
    _set_extra(msg, None)
    _set_private(msg, None)
    return msg


def step_frame(raw: str | bytes, max_bytes: int) -> StepMsg | None:
    """``step_message(frames.decode_frame(raw, max_bytes))`` for a frame of at most a
    quarter of ``max_bytes`` (characters or bytes: never too large, however encoded) that
    orjson reads as an object; None otherwise, and the caller reads the frame the long way.

    ``decode_frame`` reads such a frame to the same object (``wire.loads``): orjson reads
    JSON as ``json`` does but for numbers past 64 bits, which it reads as floats (and
    ``step_message`` takes no float; the frame's only numbers are its ``id``, an ``int``
    within 64 bits, and whatever it holds that ``step_message`` refuses), and it refuses
    the rest of what ``json`` reads otherwise (NaN, infinities, lone surrogates, a byte
    order mark, bytes that are not UTF-8). Nor is it too deep: a step ``step_message``
    takes nests two objects."""
    if orjson is None or 4 * len(raw) > max_bytes:
        return None
    try:
        data = orjson.loads(raw)
    except Exception:  # orjson.JSONDecodeError, or anything: decode_frame decides
        return None
    return step_message(data) if type(data) is dict else None
