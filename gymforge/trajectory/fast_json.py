"""``canonical_json``'s exact text at C speed, for the trajectory writer's hot path.

The writer's costliest step is the canonical JSON of each record: ``json`` writes a float's
shortest text in Python, and a step record carries hundreds (its token logprobs). orjson
(when installed) writes the same shortest digits, keys sorted by code point (UTF-8 byte
order), UTF-8 kept and the same escapes as ``json`` with ``ensure_ascii=False``; it lays out
two kinds of float differently, and :func:`fast_canonical` rewrites exactly those:

- magnitudes in [1e-05, 1e-04) (Python: exponent ``-05``), which orjson writes in
  positional form (``0.00001``);
- exponents ``-06`` to ``-09``, which orjson writes with one digit (``1e-7``).

Each such token is replaced by ``repr(float(token))``, Python's own text of the same double
(the token's digits round-trip), so the rewrite cannot change a value. The rewrite runs only
outside JSON strings: the text is split at its strings first (in C), and only pieces holding
a candidate are rewritten.

The contract is narrow on purpose: ``fast_canonical(value) == canonical_json(value)`` for a
tree of exactly ``dict`` (``str`` keys), ``list``, ``str``, ``int``, finite ``float``,
``bool`` and ``None``. For anything else orjson's text may differ (it writes NaN as ``null``,
and dataclasses, datetimes and plain enums where ``json`` refuses them), so a caller uses
the text only once it knows the value is such a tree: the writer encodes the validated dump
of a record (which holds only those types, and no NaN: it was parsed from JSON text). It
returns None when orjson is absent or refuses the value (a lone surrogate, an int past 64
bits, nesting past orjson's limit); the caller then takes ``canonical_json``.
tests/test_trajectory_fast_json.py proves the equality over generated trees and real lines.
"""

from __future__ import annotations

import re
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - the pure-Python path: canonical_json everywhere
    orjson = None  # type: ignore[assignment]

_OPTIONS = 0 if orjson is None else orjson.OPT_SORT_KEYS
_STRINGS = re.compile(r'("(?:[^"\\]|\\.)*")', re.DOTALL)
"""A JSON string of orjson's output (a backslash always starts a two-character escape or
``\\uXXXX``, whose tail holds no quote): splitting at it with the group kept gives the text
outside strings at even indices."""
_DIFFERS = re.compile(r"(?<![\d.])-?(?:0\.0000\d+|\d(?:\.\d+)?e-\d(?!\d))")
"""The float tokens orjson lays out unlike ``repr`` (module docstring), each a whole token
(``10.00001`` is not one); outside strings only."""


def _python_float(match: re.Match[str]) -> str:
    return repr(float(match.group()))


def orjson_bytes(value: Any) -> bytes | None:
    """orjson's text of ``value`` with sorted keys, before the float rewrite (the same JSON
    values as ``canonical_json``'s for a plain tree), or None when orjson is absent or
    refuses ``value``."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        return None


def fast_canonical(value: Any) -> str | None:
    """``canonical_json(value)`` for a plain JSON tree (module docstring), or None when
    orjson is absent or refuses ``value``."""
    raw = orjson_bytes(value)
    if raw is None:
        return None
    text = raw.decode()
    if "0.0000" not in text and "e-" not in text:
        return text
    pieces = _STRINGS.split(text)
    for i in range(0, len(pieces), 2):
        piece = pieces[i]
        if "0.0000" in piece or "e-" in piece:
            pieces[i] = _DIFFERS.sub(_python_float, piece)
    return "".join(pieces)
