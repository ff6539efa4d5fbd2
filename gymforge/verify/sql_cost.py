"""SQLite's string searches charged to the query's budget by the work they do.

The progress handler that bounds a query counts virtual-machine steps, and can stop a query
only between two of them; but one step can call a function whose work grows with the
product of two argument lengths, each up to the 100 kB cell cap: ``trim(x, y)`` compares
every trimmed character of ``x`` with every character of ``y`` (1.5 s for one call on a
90 kB ``x`` and a 7,000-character ``y``), ``instr`` and ``replace`` compare the needle
at every position of the haystack, ``like`` and ``glob`` the pattern at every position.
Such a call is a few steps, so thousands of them run between two calls of the handler,
and a single one already outlasts the wall-clock backstop.

``install`` overrides these functions with ones that first charge ``cost(args) //
BYTES_PER_STEP`` steps to the query's budget (``charge`` raises when it runs out: the
query is ``too_slow``, deterministically, as the step count is) and then run SQLite's own
function (``sql_builtin``). The cost is the product of the argument lengths in UTF-8 bytes:
a bound on the bytes SQLite compares, whatever the arguments hold.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from gymforge.verify.sql_builtin import Charge, Report, override

BYTES_PER_STEP = 16
"""Bytes compared that count as one VM step (a step costs tens of nanoseconds; a byte
compared, up to two)."""


def size(value: Any) -> int:
    """The bytes SQLite reads of ``value`` as text or blob (a number: its digits)."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes):
        return len(value)
    return 0 if value is None else 24


def _product(args: tuple[Any, ...]) -> int:
    """The first argument's size times the second's (the set of ``trim``: a space)."""
    first = size(args[0]) if args else 0
    second = size(args[1]) if len(args) > 1 else 1
    return first * max(second, 1)


COSTS: dict[str, Callable[[tuple[Any, ...]], int]] = {
    "instr": _product,  # haystack x needle
    "replace": lambda a: _product(a) + (size(a[2]) if len(a) > 2 else 0) * size(a[0]),
    "trim": _product,  # text x the characters to trim
    "ltrim": _product,
    "rtrim": _product,
    "like": _product,  # pattern x text
    "glob": _product,
}
"""Per function, a bound on the bytes SQLite reads, compares or writes in one call."""


def _charged(name: str, charge: Charge) -> Callable[[tuple[Any, ...]], None]:
    cost = COSTS[name]

    def check(args: tuple[Any, ...]) -> None:
        charge(cost(args) // BYTES_PER_STEP)

    return check


def install(
    conn: sqlite3.Connection, helper: sqlite3.Connection, budget: tuple[Charge, Report]
) -> None:
    """Override ``conn``'s functions in ``COSTS``: each call charges its steps with the
    ``charge`` of ``budget`` (which raises to stop the query), then runs SQLite's own on
    ``helper`` (``sql_builtin.override``)."""
    for name in COSTS:
        override(conn, helper, name, _charged(name, budget[0]), budget)
