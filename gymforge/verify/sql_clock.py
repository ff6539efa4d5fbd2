"""SQLite's date functions without the clock or the host's time zone.

SQLite reads the clock for any time value equal to ``now`` (case-insensitive), and the
host's time zone for the ``localtime`` and ``utc`` modifiers, whether the query spells
them out or computes them (``'n' || 'ow'``, ``char(110, 111, 119)``, the blob
``X'6E6F77'``), or call a date function with no time value under a quoted name
(``"date"()``). SQLite reads these arguments as C strings, up to their first NUL: ``'now'
|| char(0) || 'x'`` is ``now`` to it too. A verdict on such a query would change with the
time or the machine, so a lexical check is not enough: ``install`` overrides ``date``,
``time``, ``datetime``, ``julianday`` and ``strftime`` on a connection with functions that
refuse those arguments (``ClockRead``) and hand every other call to SQLite's own function
(``sql_builtin``: same results, same modifiers).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gymforge.verify.sql_builtin import Charge, Report, override

DATE_FUNCTIONS = ("date", "time", "datetime", "julianday", "strftime")
CLOCK_WORDS = frozenset({"now", "localtime", "utc"})


class ClockRead(Exception):
    """A date function was given ``now`` or a time-zone modifier."""

    def __init__(self, function: str) -> None:
        super().__init__(function)
        self.function = function


def _text(value: Any) -> str | None:
    """``value`` as SQLite's date functions read it: text (a blob read as text) up to its
    first NUL, or None for a number or NULL."""
    if isinstance(value, bytes):  # SQLite reads a blob argument as text
        value = value.decode("utf-8", "replace")
    return value.split("\x00", 1)[0] if isinstance(value, str) else None


def reads_clock(name: str, args: tuple[Any, ...]) -> bool:
    """Whether date function ``name`` given ``args`` would read the clock or the time zone
    (without a time value it is ``now``: ``"date"()`` slips past a lexical check)."""
    if len(args) < (2 if name == "strftime" else 1):
        return True
    return any((t := _text(a)) is not None and t.strip().lower() in CLOCK_WORDS for a in args)


def _refuse_clock(name: str) -> Any:
    def check(args: tuple[Any, ...]) -> None:
        if reads_clock(name, args):
            raise ClockRead(name)

    return check


def install(
    conn: sqlite3.Connection, helper: sqlite3.Connection, budget: tuple[Charge, Report]
) -> None:
    """Override ``conn``'s date functions (SQLite's own run on ``helper``, from
    ``sql_builtin.private_helper``); a refused call raises ``ClockRead``, given to the
    ``report`` of ``budget`` first (``sql_builtin.override``)."""
    for name in DATE_FUNCTIONS:
        override(conn, helper, name, _refuse_clock(name), budget)
