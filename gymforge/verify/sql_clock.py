"""SQLite's date functions without the clock or the host's time zone.

SQLite reads the clock for any time value equal to ``now`` (case-insensitive), and the
host's time zone for the ``localtime`` and ``utc`` modifiers, whether the query spells
them out or computes them (``'n' || 'ow'``, ``char(110, 111, 119)``, the blob
``X'6E6F77'``), or call a date function with no time value under a quoted name
(``"date"()``). A verdict on such a query would change with the time or the machine, so a
lexical check is not enough: ``install`` overrides ``date``, ``time``, ``datetime``,
``julianday`` and ``strftime`` on a connection with functions that refuse those
arguments (``ClockRead``) and hand every other call to SQLite's own function on a private
in-memory connection (same results, same modifiers).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

DATE_FUNCTIONS = ("date", "time", "datetime", "julianday", "strftime")
CLOCK_WORDS = frozenset({"now", "localtime", "utc"})


class ClockRead(Exception):
    """A date function was given ``now`` or a time-zone modifier."""


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):  # SQLite reads a blob argument as text
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def reads_clock(name: str, args: tuple[Any, ...]) -> bool:
    """Whether date function ``name`` given ``args`` would read the clock or the time zone
    (without a time value it is ``now``: ``"date"()`` slips past a lexical check)."""
    if len(args) < (2 if name == "strftime" else 1):
        return True
    return any((t := _text(a)) is not None and t.strip().lower() in CLOCK_WORDS for a in args)


def _clockless(name: str, helper: sqlite3.Connection, seen: Callable[[str], None]) -> Any:
    def call(*args: Any) -> Any:
        if reads_clock(name, args):
            seen(name)
            raise ClockRead(name)
        return helper.execute(f"SELECT {name}({', '.join('?' * len(args))})", args).fetchone()[0]

    return call


def install(conn: sqlite3.Connection, seen: Callable[[str], None]) -> sqlite3.Connection:
    """Override ``conn``'s date functions; ``seen(name)`` is told of a refused call. Returns
    the private helper connection (close it with ``conn``)."""
    helper = sqlite3.connect(":memory:", check_same_thread=False)
    for name in DATE_FUNCTIONS:
        conn.create_function(name, -1, _clockless(name, helper, seen), deterministic=True)
    return helper
