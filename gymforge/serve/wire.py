"""The wire's JSON at C speed: orjson where its value or its text is provably ``json``'s.

A session decodes every client frame with ``json.loads`` and encodes every reply with the
``json`` C encoder (ASCII-escaped, NaN refused: ``protocol.dumps``); on a step of a small
environment those two are a fifth of the server's own work. orjson does each in a fraction
of the time, and differs from ``json`` only where this module does not use it:

**Decoding** (:func:`loads`). orjson parses an integer past 64 bits as a float, where
``json`` keeps it exact: a frame holding 19 or more digits in a row (anywhere, strings
included) is left to ``json``. Everything else orjson refuses rather than reading it
differently: ``NaN`` and ``Infinity``, numbers out of a double's range (``1e400``, which
``json`` reads as infinity), lone surrogate escapes, a byte-order mark, bytes that are not
UTF-8 (``json`` reads UTF-16 and UTF-32 bytes), nesting past its limit. Whatever orjson
refuses, ``json.loads`` decodes (or refuses with its own error, which the caller reports).

**Encoding** (:func:`ascii_json`). orjson writes the same text as ``json`` (compact
separators) for a tree of exactly ``dict`` (``str`` keys), ``list``, ``tuple``, ``str``,
``int``, finite ``float``, ``bool`` and ``None`` (:func:`plain`), but for three layouts:
non-ASCII text and U+007F, which orjson writes as UTF-8 and ``json`` escapes (rewritten here
with ``json``'s own escaper, run by run), and two kinds of float (rewritten by
``gymforge.trajectory.fast_json.canonical_text``). Outside such a tree the two part ways:
orjson writes NaN and infinities as ``null`` (``json`` refuses them), enums and UUIDs by
value (``json`` refuses them), and refuses what ``json`` writes (an integer past 64 bits, a
key that is not a string) or writes by its own rules (a subclass); there the caller takes
``json``. The check walks the message, except for the values its caller names as made by
pydantic's ``model_dump(mode="json")``, which is always such a tree (NaN becomes ``None``,
an enum its value, a UUID its text: tests/serve/test_serve_wire.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from gymforge.trajectory.fast_json import PLAIN, _exponent_mark, canonical_text

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; json then does it all
    orjson = None  # type: ignore[assignment]

_LONG_DIGITS_STR = re.compile(r"[0-9]{19}")
_LONG_DIGITS_BYTES = re.compile(rb"[0-9]{19}")
_NOT_ASCII = re.compile("[^\x00-\x7e]+")
"""What ``json`` escapes and orjson writes as it is: non-ASCII text and U+007F (only ever
inside strings: JSON's own syntax is ASCII, and no escape orjson writes contains them)."""
_DEL = 0x7F
_MINUS = 0x2D
"""Bytes looked for as ints (``int in bytes`` is ``memchr``; a ``bytes`` operand first
tries, and fails, to be read as an int)."""
_SCALARS = frozenset({str, int, bool, type(None)})
_MAX_DEPTH = 64
"""Deeper trees than this take ``json`` (orjson's own limit is 255)."""


def loads(raw: str | bytes) -> Any:
    """``json.loads(raw)``, by orjson where it reads ``raw`` the same (module docstring);
    raises whatever ``json.loads`` raises."""
    if orjson is not None:
        long = _LONG_DIGITS_STR if isinstance(raw, str) else _LONG_DIGITS_BYTES
        if long.search(raw) is None:  # type: ignore[arg-type]  # str with str, bytes with bytes
            try:
                return orjson.loads(raw)
            except Exception:  # orjson.JSONDecodeError, or anything: json.loads decides
                pass
    return json.loads(raw)


def plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is a tree of exactly ``dict`` with ``str`` keys, ``list``,
    ``tuple``, ``str``, ``int``, finite ``float``, ``bool`` and ``None``, at most
    ``_MAX_DEPTH`` containers deep."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is float:
        return bool(value - value == 0.0)  # NaN and infinities give NaN
    if depth >= _MAX_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():  # scalars inline: a call per container only
            if type(key) is not str:
                return False
            kind = type(item)
            if kind in _SCALARS:
                continue
            if kind is float:
                if item - item != 0.0:
                    return False
            elif not plain(item, depth + 1):
                return False
        return True
    if kind is not list and kind is not tuple:
        return False
    for item in value:
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is float:
            if item - item != 0.0:
                return False
        elif not plain(item, depth + 1):
            return False
    return True


def ascii_json(message: dict[str, Any], dumped: Collection[str] = ()) -> str | None:
    """``protocol.dumps(message)``'s text by orjson, or None where orjson's could differ
    (the caller then encodes ``message`` with ``json``). ``dumped`` names top-level keys
    whose values the caller made with pydantic's ``model_dump(mode="json")`` (or None):
    those are not walked."""
    raw = plain_orjson(message, dumped)
    return None if raw is None else _ascii_text(raw)


def ascii_utf8(message: dict[str, Any], dumped: Collection[str] = ()) -> bytes | None:
    """``ascii_json(message, dumped)`` encoded (ASCII: its UTF-8 is its bytes), or None as
    ``ascii_json``: orjson's own bytes when they are that text already (ASCII without
    U+007F, and nothing ``canonical_text`` rewrites: its marks, ``0.0000`` and a digit's
    ``e-``, absent; a ``-`` in the bytes first, found by ``memchr``)."""
    raw = plain_orjson(message, dumped)
    if raw is None:
        return None
    if raw.isascii() and _DEL not in raw:
        text = raw.decode()
        if "0.0000" not in text and (_MINUS not in raw or not _exponent_mark(text)):
            return raw
    return _ascii_text(raw).encode()


def plain_orjson(message: dict[str, Any], dumped: Collection[str] = ()) -> bytes | None:
    """orjson's bytes of ``message`` when ``message`` is a plain tree (``dumped`` as in
    ``ascii_json``, not walked), else None."""
    if orjson is None or type(message) is not dict:
        return None
    for key, value in message.items():
        kind = type(value)
        if type(key) is not str:
            return None
        if kind in _SCALARS or key in dumped:
            continue
        if kind is float:
            if value - value != 0.0:
                return None
        elif not plain(value, 1):
            return None
    try:
        return orjson.dumps(message, option=PLAIN)
    except Exception:  # orjson.JSONEncodeError (a TypeError), or anything: json decides
        return None


def _ascii_text(raw: bytes) -> str:
    """``json``'s text of the plain tree orjson wrote as ``raw``."""
    text = canonical_text(raw)
    if raw.isascii() and _DEL not in raw:
        return text
    return _NOT_ASCII.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return json.encoder.encode_basestring_ascii(match.group())[1:-1]


_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
"""One encoder for every frame (``json.dumps`` with options builds one per call: ~1 us)."""
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)


def json_text(message: dict[str, Any]) -> str:
    """The ``json`` encoder's wire text of ``message`` (ValueError for NaN): the C encoder
    called directly (what ``JSONEncoder.encode`` does after building a float formatter per
    call)."""
    if _C_ENCODER is None:
        return _ENCODER.encode(message)
    encode = _C_ENCODER(
        {},
        _ENCODER.default,
        json.encoder.encode_basestring_ascii,
        None,
        ":",
        ",",
        False,
        False,
        False,
    )
    return "".join(encode(message, 0))
