"""Hash-flooding checks on the values a candidate returns, before any test sees them.

A test runs in the judge's process on what the candidate returned, and tests hash those
values: ``set(similar_elements(...)) == {4, 5}`` (MBPP), ``Counter(...)``, ``dict(...)``,
``set(map(tuple, ...))``. Integers, floats and tuples hash predictably (``hash(i * (2**61 -
1)) == 0`` for every ``i``), so a candidate that returns a *list* of ~40k such integers (1 MB,
inside ``Limits.return_bytes``) makes the test's ``set()`` quadratic: about 10 s of the
judge's own time per call, outside every sandbox limit. The decoder cannot refuse a list for
that (a list may hold anything); this check does, in time linear in the value.

``unflooded`` walks the standard containers the wire decodes too (``Counter``,
``defaultdict``, ``OrderedDict`` as dicts, a ``deque`` as a list, a named tuple as a tuple,
the fields of a dataclass or enum value). It groups every scalar in the value, and every list
or tuple whose own elements are at most ``HASHED_HEIGHT`` levels deep (the shapes a test turns
into set elements or dict keys), by ``hash`` of the form a test would hash (a list as a tuple; the
elements of a set are noted, the set itself is not). More than ``MAX_SAME_HASH`` *distinct*
values sharing one hash is flooding: honest data never has it (equal values share a hash
legitimately and count once, as they do in a ``set``). ``refuse_flooded`` turns a call
whose value floods into a failed call: the value never reaches the test.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, OrderedDict, defaultdict, deque
from enum import Enum
from itertools import compress, groupby, islice
from typing import Any

from gymforge.sandbox import CallResult, CallStatus

MAX_SAME_HASH = 8
HASHED_HEIGHT = 2
_CHUNK = 64
_SCALARS = frozenset({int, float, complex, str, bytes, bool, type(None)})
_DICTS = frozenset({dict, Counter, OrderedDict, defaultdict})


class Flooded(Exception):
    """The value holds more than ``MAX_SAME_HASH`` distinct values with one hash."""


def unflooded(value: Any) -> None:
    """Raise ``Flooded`` if hashing the parts of ``value`` (as a test might) is quadratic.

    Linear: the parts are collected in one walk, hashed and counted by hash in C (a dict
    keyed by hash values cannot itself be flooded: an int below 2**61 - 1, which every hash
    is, hashes to itself); only the parts of a hash shared by more than ``MAX_SAME_HASH`` of
    them are then put in a set, a chunk at a time, to tell equal values from distinct ones."""
    parts: list[Any] = []
    _walk(value, parts)
    counts = Counter(map(hash, parts))
    crowded = {h for h, n in counts.items() if n > MAX_SAME_HASH}
    if not crowded:
        return
    suspects = sorted(compress(parts, map(crowded.__contains__, map(hash, parts))), key=hash)
    for _, group in groupby(suspects, key=hash):
        # A set of values that share a hash costs one probe per distinct value already in
        # it: filled a chunk at a time and stopped past MAX_SAME_HASH, it stays linear.
        distinct: set[Any] = set()
        while chunk := list(islice(group, _CHUNK)):
            distinct.update(chunk)
            if len(distinct) > MAX_SAME_HASH:
                raise Flooded(
                    f"refused: more than {MAX_SAME_HASH} distinct values in the return value "
                    "share one hash (hash flooding)"
                )


def _walk(v: Any, parts: list[Any]) -> tuple[int, Any]:
    """``(height, hashable form or None)`` of ``v``; appends every form to ``parts``."""
    t: Any = type(v)
    if t in _SCALARS:
        parts.append(v)
        return 0, v
    if t in _DICTS:
        for k, x in dict.items(v):
            _walk(k, parts)
            _walk(x, parts)
        return HASHED_HEIGHT + 1, None
    if t is deque or (isinstance(v, tuple) and t is not tuple):  # a named tuple hashes as one
        t, v = (list if t is deque else tuple), (list(v) if t is deque else tuple(v))
    elif dataclasses.is_dataclass(v) or isinstance(v, Enum):  # decoded: classes of our own
        for x in _fields(v):
            _walk(x, parts)
        return HASHED_HEIGHT + 1, None
    if t not in (list, tuple, set, frozenset):
        return HASHED_HEIGHT + 1, None  # not plain data: never decoded from the wire
    if _SCALARS.issuperset(map(type, v)):  # the common case, at C speed
        parts.extend(v)
        height, forms = (1 if v else 0), v
    else:
        height, out = 0, []
        for x in v:
            h, f = _walk(x, parts)
            height = max(height, h + 1)
            out.append(f)
        if height > HASHED_HEIGHT or any(f is None for f in out):
            return height, None
        forms = out
    if t in (set, frozenset):  # its elements are noted; copying it could itself be slow
        return height, None
    form = tuple(forms)
    parts.append(form)
    return height, form


def _fields(v: Any) -> list[Any]:
    """The values inside a decoded dataclass instance or enum member."""
    if isinstance(v, Enum):
        return [v.value]
    return [getattr(v, f.name) for f in dataclasses.fields(v)]


def refuse_flooded(res: CallResult, notes: list[str]) -> CallResult:
    """``res``, or, if its value floods, the same call failed as unserialisable (the reason
    is added to ``notes``)."""
    try:
        unflooded(res.value)
    except Flooded as e:
        notes.append(f"{res.name}: {e}")
        return res.model_copy(
            update={"status": CallStatus.UNSERIALISABLE, "value": None, "error": str(e)}
        )
    return res
