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

PLAIN = (
    0
    if orjson is None
    else orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)
"""orjson refuses (there being no ``default``) what ``json`` writes unlike it or refuses:
a subclass of ``dict``, ``list``, ``str`` or ``int`` (``json`` encodes a dict subclass by
its ``items()``, which may lie, and the writer's ``==`` cannot tell a subclass whose
``__eq__`` says yes to anything), a dataclass or a datetime; the caller then takes
``canonical_json``. An enum orjson still writes by its value (tests/redteam/
test_writer_lying_values.py)."""
_OPTIONS = 0 if orjson is None else orjson.OPT_SORT_KEYS | PLAIN
_STRINGS = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")', re.DOTALL)
"""A JSON string of orjson's output (a backslash always starts a two-character escape or
``\\uXXXX``, whose tail holds no quote): splitting at it with the group kept gives the text
outside strings at even indices. (Written as "unrolled" runs of plain characters, the
same strings as ``"(?:[^"\\\\]|\\\\.)*"``, at twice its speed.)"""
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


def unsorted_bytes(value: Any) -> bytes | None:
    """orjson's text of ``value`` with its keys in the order they are in (half the cost of
    sorting them), or None as ``orjson_bytes``."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(value, option=PLAIN)
    except (TypeError, ValueError):
        return None


def fast_canonical(value: Any) -> str | None:
    """``canonical_json(value)`` for a plain JSON tree (module docstring), or None when
    orjson is absent or refuses ``value``."""
    raw = orjson_bytes(value)
    return None if raw is None else canonical_text(raw)


def canonical_text(raw: bytes) -> str:
    """``fast_canonical(value)`` from ``raw``, the ``orjson_bytes(value)`` already made."""
    text = raw.decode()
    if "0.0000" not in text and not _exponent_mark(text):
        return text
    return _relaid(text)


_DIGITS = frozenset("0123456789")


def _exponent_mark(text: str) -> bool:
    """Whether ``text`` holds ``e-`` right after a digit: the exponent tokens of
    ``_DIFFERS`` have one (``\\d(?:\\.\\d+)?e-``), and the ``e-`` of a word or an id in
    a string (``one-third``, an id ending in ``e``) mostly has not, which would send the
    text to ``_relaid`` for nothing."""
    i = text.find("e-")
    while i >= 0:
        if i and text[i - 1] in _DIGITS:
            return True
        i = text.find("e-", i + 2)
    return False


_RUN = frozenset("-0123456789.e")
"""The characters ``_DIFFERS`` matches, looks behind and looks ahead at: a match lies
within one maximal run of them, and its lookarounds see the same outside the run (a
character not in the run is neither a digit nor a dot) as in the whole text."""
_RUN_END = re.compile(r"[-0-9.e]*")
_FEW_MARKS = 8
"""Past this many marks (a policy record's small logprobs, each a float to rewrite) the
split costs less than finding each mark's run in Python."""


def _runs(text: str) -> list[tuple[int, int]]:
    """The maximal runs of ``_RUN`` characters holding ``e-`` or ``0.0000``, in text order:
    the only places ``_DIFFERS`` can match (each mark is part of every match)."""
    runs: dict[int, int] = {}
    for mark in ("e-", "0.0000"):
        i = text.find(mark)
        while i >= 0:
            start = i
            while start and text[start - 1] in _RUN:
                start -= 1
            end = _RUN_END.match(text, i).end()  # type: ignore[union-attr]
            runs[start] = end
            i = text.find(mark, end)  # an occurrence before ``end`` lies in this run
    return sorted(runs.items())


def _relaid(text: str) -> str:
    """``text`` (orjson's, holding a rewrite mark) with every ``_DIFFERS`` token outside its
    strings rewritten: exactly what :func:`_split_relaid` returns, without running a regex
    over the whole text (the mark may well be in a string only: an id ending in ``e``).

    A run lies on one side of every quote (quotes are not run characters); it is outside
    the strings when the quotes before it that are not escaped are even in number. Without
    the sequence backslash-backslash-quote in the text, every backslash-quote is an escaped
    quote (its backslash cannot end an escaped backslash) and every escaped quote is one, so
    that number is two counts in C; with it, or past ``_FEW_MARKS`` marks,
    :func:`_split_relaid` decides."""
    if '\\\\"' in text or text.count("e-") + text.count("0.0000") > _FEW_MARKS:
        return _split_relaid(text)
    runs = _runs(text)
    pieces: list[str] = []
    copied = counted = quotes = 0
    for start, end in runs:
        token = text[start:end]
        new = _DIFFERS.sub(_python_float, token)
        if new == token:
            continue
        quotes += text.count('"', counted, start) - text.count('\\"', counted, start)
        counted = start  # text[start] is a run character: no escape straddles it
        if quotes % 2:
            continue  # inside a string
        pieces += (text[copied:start], new)
        copied = end
    pieces.append(text[copied:])
    return "".join(pieces)


def _split_relaid(text: str) -> str:
    """The rewrite by the definition: the text split at its strings (in C), and the float
    tokens of every piece outside them rewritten."""
    pieces = _STRINGS.split(text)
    for i in range(0, len(pieces), 2):
        piece = pieces[i]
        if "0.0000" in piece or "e-" in piece:
            pieces[i] = _DIFFERS.sub(_python_float, piece)
    return "".join(pieces)
