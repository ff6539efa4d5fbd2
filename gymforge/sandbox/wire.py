"""Wire format shared by the host and the in-sandbox zygote. Standard library only: this file is
copied into every sandbox and imported by ``python3 -I -S``, so it must not import gymforge.

**Frames** (host <-> zygote <-> job child) are length-prefixed and binary-light::

    u32 total | u32 header_len | header (JSON, utf-8) | (u32 blob_len | blob bytes)*

The header is a small JSON object; bulk bytes (stdin, stdout, files, compiled artefacts, encoded
return values) travel as blobs and are never JSON-escaped.

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
import builtins
import json
import math
import os
import select
import struct
import time
from typing import TYPE_CHECKING, Any

# The sandbox imports this file as ``wire`` with ``stdvalues`` its sibling; the host as part
# of the package.
if TYPE_CHECKING or __package__:
    from gymforge.sandbox import stdvalues
else:  # pragma: no cover - inside the sandbox
    import stdvalues

_U32 = struct.Struct(">I")
MAX_FRAME = 1 << 30
SMALL_READ = 1 << 16  # one read's size while the frame being read is no larger
MAX_DEPTH = 100
MAX_ITEMS = 1 << 20  # values one decode may build
MAX_SAME_HASH = 8  # elements of one set or dict that may share a hash (legitimately: rare)
_BIG_INT_BITS = 12000  # ~3600 decimal digits: below CPython's 4300-digit str() limit


class FrameError(Exception):
    """A frame was malformed, oversized, or the stream ended in the middle of one."""


class Unserialisable(Exception):
    """A value is not plain data (wrong type, a subclass, too deep, or too large)."""


# ----------------------------------------------------------------------------- frames


def pack_frame(header: dict[str, Any], blobs: tuple[bytes, ...] | list[bytes] = ()) -> bytes:
    """Serialise one frame: ``header`` must be JSON-serialisable, ``blobs`` are raw bytes."""
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    parts = [b"", _U32.pack(len(head)), head]
    for blob in blobs:
        parts.append(_U32.pack(len(blob)))
        parts.append(bytes(blob))
    body_len = sum(len(p) for p in parts)
    parts[0] = _U32.pack(body_len)
    return b"".join(parts)


def unpack_body(body: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """Split a frame body (everything after the total length) into header and blobs."""
    if len(body) < 4:
        raise FrameError("frame too short")
    (head_len,) = _U32.unpack_from(body, 0)
    if 4 + head_len > len(body):
        raise FrameError("header overruns frame")
    try:
        header = json.loads(body[4 : 4 + head_len])
    except (ValueError, RecursionError) as e:
        raise FrameError(f"bad header: {e}") from None
    if not isinstance(header, dict):
        raise FrameError("header is not an object")
    blobs: list[bytes] = []
    pos = 4 + head_len
    while pos < len(body):
        if pos + 4 > len(body):
            raise FrameError("truncated blob length")
        (n,) = _U32.unpack_from(body, pos)
        pos += 4
        if pos + n > len(body):
            raise FrameError("blob overruns frame")
        blobs.append(body[pos : pos + n])
        pos += n
    return header, blobs


def unpack_frame(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """One whole frame (e.g. a datagram): its length prefix must match. Raises ``FrameError``."""
    if len(data) < 4 or _U32.unpack_from(data, 0)[0] != len(data) - 4:
        raise FrameError("datagram is not one whole frame")
    return unpack_body(data[4:])


class FrameReader:
    """Incremental decoder for a non-blocking stream. ``feed`` returns complete frames.

    ``max_frame`` bounds the size a peer may announce; a larger announcement raises
    :class:`FrameError` at once, before any of it is buffered.
    """

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()
        self.error: FrameError | None = None

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], list[bytes]]]:
        """Complete frames in arrival order. Frames before a bad one are still returned; the
        error is then kept in ``error`` (and raised by the next ``feed``): the stream is dead.
        """
        if self.error is not None:
            raise self.error
        self._buf += data
        out = []
        try:
            while len(self._buf) >= 4:
                (n,) = _U32.unpack_from(self._buf, 0)
                if n > self.max_frame:
                    raise FrameError(f"frame of {n} bytes exceeds the {self.max_frame}-byte cap")
                if len(self._buf) < 4 + n:
                    break
                body = bytes(self._buf[4 : 4 + n])
                del self._buf[: 4 + n]
                out.append(unpack_body(body))
        except FrameError as e:
            self.error = e
            if not out:
                raise
        return out

    @property
    def pending(self) -> int:
        return len(self._buf)

    @property
    def wanted(self) -> int:
        """Bytes still missing from the frame being read (its length prefix first)."""
        if len(self._buf) < 4:
            return 4 - len(self._buf)
        n: int = _U32.unpack_from(self._buf, 0)[0]
        return max(4 + n - len(self._buf), 1)


class FrameStream:
    """Frames from a blocking fd, read in large chunks (usually one ``read`` per frame).
    ``recv`` raises ``TimeoutError`` once ``deadline`` (``time.monotonic()``) passes and
    ``FrameError`` on EOF or garbage."""

    def __init__(self, fd: int, max_frame: int = MAX_FRAME) -> None:
        self.fd = fd
        self.reader = FrameReader(max_frame)
        self.ready: list[tuple[dict[str, Any], list[bytes]]] = []

    def recv(self, deadline: float | None = None) -> tuple[dict[str, Any], list[bytes]]:
        while not self.ready:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    raise TimeoutError("no reply before the deadline")
            chunk = os.read(self.fd, _chunk_size(self.reader.wanted))
            if not chunk:
                raise FrameError("stream closed")
            self.ready.extend(self.reader.feed(chunk))
        return self.ready.pop(0)


def _chunk_size(wanted: int) -> int:
    """How much to ask one ``read`` for: a small frame whole (and what follows it) in one
    small read; a large one in chunks of at most 1 MiB. ``os.read`` allocates the size it is
    asked for, and a 1 MiB allocation costs ~50 us: a request's whole round trip otherwise."""
    return SMALL_READ if wanted <= SMALL_READ else min(wanted, 1 << 20)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte to a blocking fd (retries short writes)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def read_frame(
    fd: int, deadline: float | None = None, max_frame: int = MAX_FRAME
) -> tuple[dict[str, Any], list[bytes]]:
    """Read one frame from a blocking fd. Raises ``TimeoutError`` once ``deadline``
    (a ``time.monotonic()`` value) passes and ``FrameError`` on EOF or garbage."""
    head = _read_exact(fd, 4, deadline)
    (n,) = _U32.unpack(head)
    if n > max_frame:
        raise FrameError(f"frame of {n} bytes exceeds the {max_frame}-byte cap")
    return unpack_body(_read_exact(fd, n, deadline))


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no reply before the deadline")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise FrameError("stream closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def flat(rec: dict[str, Any], keys: tuple[str, ...], max_str: int = 2000) -> dict[str, Any]:
    """The ``keys`` of a record a job wrote whose values are scalars (strings cut to
    ``max_str``): all the zygote forwards of a job's control records, so what the host decodes
    of them is bounded in depth and size whatever the job put there."""
    out: dict[str, Any] = {}
    for k in keys:
        v = rec.get(k)
        if type(v) is str:
            out[k] = v[:max_str]
        elif v is None or type(v) in (bool, int, float):
            out[k] = v
    return out


# ----------------------------------------------------------------------------- plain values


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


# ----------------------------------------------------------------------------- own builtins

PINNED = [
    "AttributeError",
    "BaseException",
    "Exception",
    "IndexError",
    "KeyError",
    "NameError",
    "OSError",
    "RecursionError",
    "StopIteration",
    "TypeError",
    "UnicodeDecodeError",
    "ValueError",
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "callable",
    "complex",
    "dict",
    "enumerate",
    "float",
    "frozenset",
    "getattr",
    "hasattr",
    "hash",
    "hex",
    "id",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "print",
    "range",
    "repr",
    "round",
    "set",
    "setattr",
    "sorted",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
]


def pin_builtins(ns: dict[str, Any]) -> None:
    """Bind the builtins the harness uses (``PINNED``) as globals of the module whose
    namespace is ``ns``, before any candidate runs. The candidate runs in the same process as
    the in-sandbox harness (``child``, this codec) and may rebind ``builtins.len``,
    ``builtins.isinstance``, ``builtins.type``...; a module's own globals are looked up before
    the ``builtins`` module, so the harness keeps the real ones and goes on encoding what the
    candidate returned, answering calls and reporting, whatever the candidate rebound."""
    for name in PINNED:
        ns.setdefault(name, getattr(builtins, name))


pin_builtins(globals())
pin_builtins(vars(stdvalues))
