"""A task family's own queries on the databases it has just generated, one connection each.

``run_query`` is the judge's path, built for answers: every query opens its connection to
a private file, restricts it, opens a helper connection, installs the function overrides
(``sql_clock``, ``sql_cost``), an authorizer and a progress handler, and closes both
connections again. While drawing a task, a family runs its gold query and each near miss
of every candidate question (``SqlFamily.build``) on two databases of its own, and that
setup cost more than the queries did.

``TrustedDatabase`` holds one in-memory database, filled by its caller, behind one
connection set up once as ``run_query`` sets up each of its own: ``restrict``'s pragmas
and limits, and the clockless and charged overrides on a private helper, installed the
first time a query names one of the functions they override (``OVERRIDDEN``: a family's
queries never do, and installing them cost as much as a query). Every query then goes
through ``precheck`` and ``run_guarded`` with a new ``Guard`` (authorizer, step budget,
wall-clock backstop, row and byte caps): the same checks and the same result as
``run_query`` on a file holding the same database (columns, values and their types:
``tests/verify/test_sql_trusted.py``). The statement cache is off, so every query is
prepared, and authorized, anew, as on a fresh connection.

For queries the caller wrote itself, **never an answer's**: an in-memory database keeps a
query's temporary files (sorts, ``DISTINCT``, ``GROUP BY``) in the heap, which only the
judge's private files avoid (``sql_files``). The judge builds an answer's databases as
files again and runs the answer through ``run_query``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence

from gymforge.verify.sql import Guard, QueryResult, SqlLimits, precheck, restrict, run_guarded
from gymforge.verify.sql_builtin import private_helper
from gymforge.verify.sql_clock import DATE_FUNCTIONS
from gymforge.verify.sql_clock import install as install_clockless
from gymforge.verify.sql_cost import COSTS
from gymforge.verify.sql_cost import install as install_charged

OVERRIDDEN = re.compile(rf"\b(?:{'|'.join((*DATE_FUNCTIONS, *COSTS))})\b", re.I)
"""A query that can call an overridden function names it: as a word of its text (SQL has
no escapes in identifiers; a quoted one, ``"date"()``, is still the word), or as the
operator ``LIKE`` or ``GLOB``. A word in a literal or a comment only costs the install."""


class TrustedDatabase:
    """An in-memory database that ``fill`` builds on a new connection (tables created, rows
    inserted, committed), then read-only; ``tables`` are the readable ones. ``query`` is
    ``run_query`` for the caller's own queries (module docstring). Closed with ``close()``
    or when collected (nothing it holds refers back to it)."""

    def __init__(
        self,
        fill: Callable[[sqlite3.Connection], None],
        tables: Sequence[str],
        limits: SqlLimits | None = None,
    ) -> None:
        self.limits = limits or SqlLimits()
        self.tables = frozenset(t.lower() for t in tables)
        conn = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=0)
        try:
            fill(conn)
            restrict(conn, self.limits)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._helper: sqlite3.Connection | None = None
        self._current = [Guard(self.tables, self.limits)]
        """The guard of the query running, which the overrides charge (a cell: the
        connection's functions never refer to this object, so no cycle keeps it alive)."""

    def query(self, sql: str) -> QueryResult:
        """``sql``'s result, or ``QueryRefused`` as ``run_query`` would refuse it."""
        sql = precheck(sql, self.limits)
        if self._helper is None and OVERRIDDEN.search(sql):
            self._install_overrides()
        guard = self._current[0] = Guard(self.tables, self.limits)
        return run_guarded(self._conn, guard, sql)

    def _install_overrides(self) -> None:
        """``run_query``'s function overrides, on this connection for good."""
        current = self._current
        budget = (
            lambda steps: current[0].charge(steps),
            lambda err: current[0].saw_raise(err),
        )
        self._helper = helper = private_helper(self._conn)
        install_clockless(self._conn, helper, budget)
        install_charged(self._conn, helper, budget)

    def serialize(self) -> bytes:
        """The database's bytes (``SqlFixture.from_bytes`` makes the judge's file of them).
        SQLite reads them with a query of its own, which the last query's authorizer would
        deny: the next query installs its guard's again."""
        self._conn.set_authorizer(None)
        return self._conn.serialize()

    def close(self) -> None:
        self._conn.close()
        if self._helper is not None:
            self._helper.close()
