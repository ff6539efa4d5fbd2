"""Plain values as JSON, the part of the wire format (``wire``) that carries arguments and
return values across the sandbox boundary. Standard library only: copied into every sandbox
next to ``wire.py`` and imported by it.

**Plain values** cross the sandbox boundary as JSON data built from exact builtin types only:
``None``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``tuple``, ``dict``, ``set``,
``frozenset``, ``bytes``, ``complex``. Subclasses are refused (an ``int`` subclass or an object
whose ``__eq__`` always answers ``True`` cannot cross), so whoever decodes gets fresh builtin
objects and compares data it built itself. Types JSON lacks are tagged with a one-key object
whose key starts with ``$``: ``{"$tuple": [...]}``, ``{"$set": [...]}``, ``{"$frozenset": [...]}``,
``{"$dict": [[k, v], ...]}`` (dicts whose keys are not all plain, ``$``-free strings),
``{"$float": "nan" | "inf" | "-inf"}``, ``{"$bytes": base64}``, ``{"$complex": [re, im]}``,
``{"$int": hex}`` (integers too long for ``int`` -> ``str`` conversion). Standard-library
values tests compare all the time (``Counter``, ``defaultdict``, ``OrderedDict``, ``deque``,
named tuples, enum members, dataclass instances, builtin types such as ``int`` passed as
values) are tagged too (``stdvalues``): decoded, they are the standard library's own
containers or classes the decoder makes itself, never the sender's.

**Decoding is bounded** (the judge decodes what a job sent, so a job must not be able to make
it work hard): the text's size (``max_bytes``), nesting depth (``MAX_DEPTH``) and the number
of values built (``max_items``) are capped, and a set, frozenset or non-string-keyed dict is
built only if no more than ``MAX_SAME_HASH`` of its elements share one hash. Integers, floats
and tuples hash predictably (``hash(i * (2**61 - 1)) == 0``), so without that check a forged
answer of ~50k colliding integers makes building one set quadratic: tens of seconds of judge
time outside every sandbox limit. With it, every decode is linear in its input.
"""

from __future__ import annotations

import base64
import json
import math
from typing import TYPE_CHECKING, Any

# The sandbox imports this file as ``plainvalues`` with its siblings by bare name; the host
# as part of the package.
if TYPE_CHECKING or __package__:
    from gymforge.sandbox import stdvalues
    from gymforge.sandbox.pinned_builtins import pin_builtins
else:  # pragma: no cover - inside the sandbox
    import stdvalues
    from pinned_builtins import pin_builtins

MAX_DEPTH = 100
MAX_ITEMS = 1 << 20  # values one decode may build
MAX_SAME_HASH = 8  # elements of one set or dict that may share a hash (legitimately: rare)
_BIG_INT_BITS = 12000  # ~3600 decimal digits: below CPython's 4300-digit str() limit


class Unserialisable(Exception):
    """A value is not plain data (wrong type, a subclass, too deep, or too large)."""


def encode_plain(value: Any, max_bytes: int = 1 << 20) -> Any:
    """Turn ``value`` into JSON-ready data, refusing anything but exact builtin types.

    ``max_bytes`` bounds the approximate encoded size; the walk stops as soon as it is passed,
    so a huge return value costs at most about ``max_bytes`` of work.
    """
    budget = [max_bytes]
    return _enc(value, 0, budget, set())


def dumps_plain(value: Any, max_bytes: int = 1 << 20) -> bytes:
    """``encode_plain`` followed by compact JSON; the exact byte length is checked too."""
    data = json.dumps(
        encode_plain(value, max_bytes), separators=(",", ":"), allow_nan=False
    ).encode()
    if len(data) > max_bytes:
        raise Unserialisable(f"value encodes to {len(data)} bytes, over the {max_bytes} cap")
    return data


def _spend(budget: list[int], n: int) -> None:
    budget[0] -= n
    if budget[0] < 0:
        raise Unserialisable("value too large")


def _enc(v: Any, depth: int, budget: list[int], seen: set[int]) -> Any:
    if depth > MAX_DEPTH:
        raise Unserialisable("value nested too deeply")
    t = type(v)
    if v is None or t is bool:
        _spend(budget, 5)
        return v
    if t is int:
        bits = v.bit_length()
        _spend(budget, bits // 3 + 2)
        if bits > _BIG_INT_BITS:
            return {"$int": hex(v)}
        return v
    if t is float:
        _spend(budget, 24)
        if math.isfinite(v):
            return v
        return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if t is str:
        _spend(budget, len(v) + 2)
        return v
    if t is bytes:
        _spend(budget, len(v) * 4 // 3 + 12)
        return {"$bytes": base64.b64encode(v).decode()}
    if t is complex:
        _spend(budget, 50)
        return {
            "$complex": [
                _enc(v.real, depth + 1, budget, seen),
                _enc(v.imag, depth + 1, budget, seen),
            ]
        }
    if t in (list, tuple, set, frozenset, dict):
        if id(v) in seen:
            raise Unserialisable("value contains a reference cycle")
        seen.add(id(v))
        try:
            _spend(budget, 2 + len(v))
            if t is dict:
                return _enc_dict(v, depth, budget, seen)
            items = [_enc(x, depth + 1, budget, seen) for x in v]
        finally:
            seen.discard(id(v))
        if t is list:
            return items
        return {"$" + t.__name__: items}
    return _enc_std(v, t, depth, budget, seen)


def _enc_std(v: Any, t: type, depth: int, budget: list[int], seen: set[int]) -> Any:
    """A ``stdvalues`` tag, or ``Unserialisable``. Whatever the value's own code raises while
    it is read (a candidate's class can raise anything) means it is not plain data."""
    if id(v) in seen:
        raise Unserialisable("value contains a reference cycle")
    seen.add(id(v))
    _spend(budget, 8)
    try:
        return stdvalues.encode(v, t, lambda x: _enc(x, depth + 1, budget, seen))
    except Unserialisable:
        raise
    except stdvalues.NotStd as e:
        raise Unserialisable(str(e)) from None
    except Exception as e:
        raise Unserialisable(f"type {t.__module__}.{t.__qualname__} is not plain data") from e
    finally:
        seen.discard(id(v))


def _enc_dict(v: dict[Any, Any], depth: int, budget: list[int], seen: set[int]) -> Any:
    if all(type(k) is str and not k.startswith("$") for k in v):
        out = {}
        for k, x in v.items():
            _spend(budget, len(k) + 3)
            out[k] = _enc(x, depth + 1, budget, seen)
        return out
    return {
        "$dict": [
            [_enc(k, depth + 1, budget, seen), _enc(x, depth + 1, budget, seen)]
            for k, x in v.items()
        ]
    }


def loads_plain(data: bytes | str, max_bytes: int | None = None, max_items: int = MAX_ITEMS) -> Any:
    """Parse JSON produced by :func:`dumps_plain` and rebuild fresh builtin objects, refusing
    (``Unserialisable``) more than ``max_bytes`` of text or ``max_items`` values (see the
    module docstring: the work is linear in the input, whoever wrote it)."""
    if max_bytes is not None and len(data) > max_bytes:
        raise Unserialisable(f"value of {len(data)} bytes exceeds the {max_bytes}-byte cap")
    try:
        obj = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise Unserialisable(f"invalid JSON: {e}") from None
    return decode_plain(obj, budget=[max_items])


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not plain JSON (non-finite floats are tagged)")


def decode_plain(obj: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """Inverse of :func:`encode_plain`. Raises :class:`Unserialisable` on unknown tags, on
    nesting deeper than ``MAX_DEPTH``, on more values than ``budget[0]`` (default
    ``MAX_ITEMS``) and on hash-flooded sets and dicts."""
    if budget is None:
        budget = [MAX_ITEMS]
    if depth > MAX_DEPTH + 2:
        raise Unserialisable("value nested too deeply")
    budget[0] -= 1
    if budget[0] < 0:
        raise Unserialisable("value has too many elements")
    t = type(obj)
    if obj is None or t in (bool, int, float, str):
        return obj
    if t is list:
        return [decode_plain(x, depth + 1, budget) for x in obj]
    if t is not dict:
        raise Unserialisable(f"unexpected JSON type {t.__name__}")
    if len(obj) == 1:
        ((key, val),) = obj.items()
        if key.startswith("$"):
            return _dec_tag(key, val, depth, budget)
    if any(k.startswith("$") for k in obj):
        raise Unserialisable("plain dict keys may not start with '$'")
    return {k: decode_plain(x, depth + 1, budget) for k, x in obj.items()}


def unflooded(items: list[Any]) -> list[Any]:
    """``items``, after checking that no more than ``MAX_SAME_HASH`` of them share a hash, so
    that a set or dict of them is built in linear time. Counting by hash is itself linear: an
    int below 2**61 - 1 in absolute value, which every hash is, hashes to itself."""
    if len(items) > MAX_SAME_HASH:
        seen: dict[int, int] = {}
        for x in items:
            h = hash(x)
            n = seen[h] = seen.get(h, 0) + 1
            if n > MAX_SAME_HASH:
                raise Unserialisable(
                    f"more than {MAX_SAME_HASH} elements of one set or dict share a hash "
                    "(hash flooding)"
                )
    return items


def _dec_tag(key: str, val: Any, depth: int, budget: list[int]) -> Any:
    def dec(x: Any) -> Any:
        return decode_plain(x, depth + 1, budget)

    try:
        if key == "$tuple":
            return tuple(dec(x) for x in _as_list(val))
        if key == "$set":
            return set(unflooded([dec(x) for x in _as_list(val)]))
        if key == "$frozenset":
            return frozenset(unflooded([dec(x) for x in _as_list(val)]))
        if key == "$dict":
            keys, values = _dec_pairs(val, dec)
            return dict(zip(keys, values, strict=True))
        if key == "$float" and val in ("nan", "inf", "-inf"):
            return float(val)
        if key == "$bytes" and type(val) is str:
            return base64.b64decode(val, validate=True)
        if key == "$complex" and type(val) is list and len(val) == 2:
            re_, im = (dec(x) for x in val)
            if type(re_) is not float or type(im) is not float:
                raise Unserialisable("$complex wants two floats")
            return complex(re_, im)
        if key == "$int" and type(val) is str:
            return int(val, 16)
        if key in stdvalues.TAGS:
            return stdvalues.decode(key, val, dec, lambda v: _dec_pairs(v, dec))
    except stdvalues.NotStd as e:
        raise Unserialisable(str(e)) from None
    except TypeError as e:  # unhashable element in a set or dict key
        raise Unserialisable(str(e)) from None
    except ValueError as e:
        raise Unserialisable(str(e)) from None
    raise Unserialisable(f"unknown or malformed tag {key!r}")


def _dec_pairs(val: Any, dec: Any) -> tuple[list[Any], list[Any]]:
    """``[[key, value], ...]`` decoded: the keys (checked not to flood a dict), the values."""
    pairs = _as_list(val)
    if not all(type(p) is list and len(p) == 2 for p in pairs):
        raise Unserialisable("wants [key, value] pairs")
    return unflooded([dec(k) for k, _ in pairs]), [dec(x) for _, x in pairs]


def _as_list(val: Any) -> list[Any]:
    if type(val) is not list:
        raise Unserialisable("tag payload must be a list")
    return val


pin_builtins(globals())
pin_builtins(vars(stdvalues))
