"""SQLite's own functions, called from a Python override of them.

``sql_clock`` and ``sql_cost`` replace some of SQLite's built-in functions on a query's
connection with Python functions that first check their arguments (a clock read, a cost
over the budget) and then hand the call to the built-in function of the same name on a
private in-memory connection: the results are SQLite's own, to the byte. That connection
carries the query connection's limits (string length, LIKE pattern length...), so an
override never lifts a cap the query's own connection would have enforced.

A call through Python costs some microseconds where SQLite's own costs tens of
nanoseconds, so each call charges ``CALL_STEPS`` VM steps to the query's budget (``charge``,
which raises once the budget is spent): the step budget, deterministic, stays the limit a
query meets, not the wall-clock backstop. SQLite reports an exception raised in a Python
function only as "user-defined function raised exception"; ``override`` hands the exception
itself to ``report`` first, so the caller can still tell a refusal (``ClockRead``, the
budget) or SQLite's own error (a string too big) from another.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

_LIMITS = tuple(getattr(sqlite3, name) for name in dir(sqlite3) if name.startswith("SQLITE_LIMIT_"))
Check = Callable[[tuple[Any, ...]], None]
"""Raises to refuse a call, before SQLite's function runs."""
Report = Callable[[BaseException], None]
Charge = Callable[[int], None]
"""Adds VM steps to the query's budget; raises ``OverBudget`` once it is spent."""
CALL_STEPS = 128
"""VM steps one call of an overridden function costs (about 6 us, a step 30 to 40 ns)."""


class OverBudget(Exception):
    """A charge spent the query's budget."""


def private_helper(conn: sqlite3.Connection) -> sqlite3.Connection:
    """An in-memory connection with ``conn``'s limits, for the overrides (close it with
    ``conn``)."""
    helper = sqlite3.connect(":memory:", check_same_thread=False)
    for limit in _LIMITS:
        helper.setlimit(limit, conn.getlimit(limit))
    return helper


def call_builtin(helper: sqlite3.Connection, name: str, args: tuple[Any, ...]) -> Any:
    """SQLite's built-in ``name`` applied to ``args`` on ``helper``."""
    marks = ", ".join("?" * len(args))
    return helper.execute(f"SELECT {name}({marks})", args).fetchone()[0]


def override(
    conn: sqlite3.Connection,
    helper: sqlite3.Connection,
    name: str,
    check: Check,
    budget: tuple[Charge, Report],
) -> None:
    """Replace ``conn``'s function ``name`` (any number of arguments) with a charge of
    ``CALL_STEPS``, ``check`` and SQLite's own ``name`` on ``helper``; ``budget`` is the
    query's ``(charge, report)``: whatever the call raises goes to ``report``."""
    charge, report = budget

    def call(*args: Any) -> Any:
        try:
            charge(CALL_STEPS)
            check(args)
            return call_builtin(helper, name, args)
        except Exception as err:
            report(err)
            raise

    conn.create_function(name, -1, call, deterministic=True)
