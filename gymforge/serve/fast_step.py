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
tests/serve/test_fast_step.py holds the two equal over generated messages.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.built import built
from gymforge.core.types import Reply, scrub_text
from gymforge.serve.protocol import StepMsg

_KEYS = frozenset({"type", "action", "id", "state"})
_ACTION_KEYS = frozenset({"kind", "text"})
_INT64 = 1 << 63


def step_message(data: dict[str, Any]) -> StepMsg | None:
    """The ``StepMsg`` that validating ``data`` gives, for a step with a reply action
    (module docstring); None for any other message."""
    kind = data.get("type")
    if type(kind) is not str or kind != "step" or not _KEYS.issuperset(data):
        return None
    action = data.get("action")
    if type(action) is not dict or len(action) != 2 or not _ACTION_KEYS.issuperset(action):
        return None
    text, tag = action["text"], action["kind"]
    if type(text) is not str or type(tag) is not str or tag != "reply":
        return None
    msg_id = data.get("id")
    if not (msg_id is None or type(msg_id) is str or _int64(msg_id)):
        return None
    state = data.get("state", False)
    if type(state) is not bool:
        return None
    if not text.isascii():
        text = scrub_text(text)
    reply = built(Reply, {"kind": "reply", "text": text}, {"kind", "text"})
    fields = {"id": msg_id, "type": "step", "action": reply, "state": state}
    return built(StepMsg, fields, set(data))


def _int64(value: Any) -> bool:
    return type(value) is int and -_INT64 <= value < _INT64
