"""``sql``: one query run read-only on a fixture, under limits: the judge's execution.

The verifier (``sql_verifier.SqlVerifier``) refuses a reply before running it
(``precheck``) and runs it and the gold query here (``run_query``).

- **Read-only execution**, several independent locks (``connect_readonly``): every query
  opens its own connection through a ``mode=ro`` URI (a file, or the private immutable
  copy that ``SqlFixture.from_bytes`` saved, never ``memdb``: ``sql_files``);
  ``PRAGMA query_only=ON``; ``PRAGMA temp_store=FILE`` (sorts spill to disk); SQLite
  limits (no attached databases; bounded string length, expression depth, compound
  selects, LIKE patterns and result columns); an authorizer that allows only ``SELECT``,
  reads of the fixture's own tables and functions in ``ALLOWED_FUNCTIONS``, and denies
  everything else (writes, ``PRAGMA``, ``ATTACH``, recursive CTEs, ``load_extension``,
  ``random``, ``current_date``, schema tables); Python's driver refuses a second statement.
  A progress handler stops the query after ``max_ops`` virtual-machine steps
  (deterministic: the same query on the same data is always stopped at the same point) and
  after ``wall_s`` seconds as a backstop; the string searches whose one call can do work
  quadratic in the cell cap (``instr``, ``replace``, ``trim``, ``like``, ``glob``) charge
  that work to the same step budget before they run (``sql_cost``); rows are fetched one
  by one and more than ``max_rows`` fail as ``too_many_rows``, more than
  ``max_result_bytes`` of text and blobs as ``too_large``.
"""

from __future__ import annotations

import re
import sqlite3
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gymforge.verify.sql_builtin import OverBudget, private_helper
from gymforge.verify.sql_clock import ClockRead
from gymforge.verify.sql_clock import install as install_clockless
from gymforge.verify.sql_compare import QueryResult as QueryResult
from gymforge.verify.sql_compare import compare_results as compare_results
from gymforge.verify.sql_compare import normalize_cell as normalize_cell
from gymforge.verify.sql_cost import install as install_charged
from gymforge.verify.sql_files import write_private_copy

ALLOWED_FUNCTIONS = frozenset(
    {
        *("count", "sum", "avg", "min", "max", "total", "group_concat"),
        *("abs", "round", "lower", "upper", "length", "substr", "substring", "instr"),
        *("trim", "ltrim", "rtrim", "replace", "coalesce", "ifnull", "nullif", "iif"),
        *("like", "glob", "date", "time", "datetime", "julianday", "strftime", "typeof"),
        *("hex", "char", "unicode", "quote", "likely", "unlikely", "sign", "trunc", "mod"),
        *("floor", "ceil", "ceiling", "sqrt", "power", "pow", "exp", "ln", "log", "log10"),
        *("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile"),
        *("lag", "lead", "first_value", "last_value", "nth_value"),
    }
)
"""Deterministic, bounded functions a query may call. Everything else is denied."""

_QUOTED_OR_COMMENT = re.compile(
    r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|`(?:[^`]|``)*`?|\[[^\]]*\]?"
    r"|--[^\n]*|/\*.*?(?:\*/|\Z)",
    re.S,
)
"""A string literal, an identifier quoted as SQLite quotes them (``"x"``, ```x```, ``[x]``:
a bracket ends at the first ``]``), or a comment (each unclosed one running to the end).
Scanned from the left, a character none of them starts is kept as it is. A comment marker
inside a quoted identifier is no comment (``SELECT 1 AS [--], date()``:
``tests/redteam/test_sql_quoted_identifier_comment_red18.py``)."""
_FIRST_WORD = re.compile(r"[\s(]*([A-Za-z]+)")
_NOW = re.compile(r"'\s*now\s*'", re.I)
_CLOCK = re.compile(
    r"\b(?:date|time|datetime|julianday|unixepoch)\s*\(\s*\)"
    r"|\bstrftime\s*\(\s*'(?:[^']|'')*'\s*\)",
    re.I,
)
"""Date functions without a time value read the clock, as ``'now'`` does."""
_DETAIL = 200


@dataclass(frozen=True)
class SqlLimits:
    """Budgets for one query. ``max_ops`` counts SQLite VM steps in ``op_chunk`` units."""

    max_sql_chars: int = 10_000
    max_ops: int = 5_000_000
    op_chunk: int = 10_000
    wall_s: float = 2.0
    max_rows: int = 1_000
    max_cell_bytes: int = 100_000
    max_columns: int = 64
    max_result_bytes: int = 4 << 20
    """Text and blob bytes fetched in all (cells are capped one by one, but a query can
    return ``max_rows`` rows of ``max_columns`` cells of ``max_cell_bytes`` each)."""


class QueryRefused(Exception):
    """The query was refused or stopped; ``reason`` is one of ``REASONS``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail[:_DETAIL]


class SqlFixture:
    """A read-only database, always opened through a ``mode=ro`` URI: a file, or serialized
    bytes saved once to a private file (``sql_files``: ``mode=ro&immutable=1``, deleted with
    this object). Not SQLite's in-memory ``memdb``: there a query's temporary files (sorts,
    ``DISTINCT``, ``GROUP BY``) grow in the heap. ``tables`` are the readable tables
    (default: every table and view in the database)."""

    def __init__(self, uri: str, tables: Sequence[str] | None = None, holder: Any = None) -> None:
        self.uri = uri
        self.tables = None if tables is None else frozenset(t.lower() for t in tables)
        self._holder = holder  # owns a private copy of the database; closed with the fixture
        if holder is not None:
            weakref.finalize(self, holder.close)

    @classmethod
    def from_path(cls, path: str | Path, tables: Sequence[str] | None = None) -> SqlFixture:
        return cls(f"file:{quote(str(Path(path).resolve()))}?mode=ro", tables)

    @classmethod
    def from_bytes(cls, data: bytes, tables: Sequence[str] | None = None) -> SqlFixture:
        """``sqlite3.DatabaseError`` if ``data`` is not a SQLite database."""
        copy = write_private_copy(data)
        return cls(f"file:{quote(str(copy.path))}?mode=ro&immutable=1", tables, copy)

    @classmethod
    def from_connection(
        cls, conn: sqlite3.Connection, tables: Sequence[str] | None = None
    ) -> SqlFixture:
        """A snapshot of ``conn``'s main database (the connection stays yours)."""
        return cls.from_bytes(conn.serialize(), tables)


@dataclass
class Guard:
    """The authorizer and progress handler of one query, with what they saw (a new one
    for every query: ``run_guarded``)."""

    tables: frozenset[str]
    limits: SqlLimits
    denied: str | None = None
    chunks: int = 0
    deadline: float = 0.0
    stopped: str | None = None
    charged: int = 0
    """VM steps charged by the overridden functions (``sql_builtin``, ``sql_cost``)."""
    raised: BaseException | None = None
    """The first exception raised in an overridden function (``sql_builtin``)."""

    def saw_raise(self, err: BaseException) -> None:
        self.raised = self.raised or err

    def charge(self, steps: int) -> None:
        """Add ``steps`` to the budget; raises ``OverBudget`` once it is spent."""
        self.charged += steps
        if self._over():
            raise OverBudget

    def authorize(self, action: int, a1: str | None, a2: str | None, db: Any, trig: Any) -> int:
        if action == sqlite3.SQLITE_SELECT:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ and (a1 or "").lower() in self.tables:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (a2 or "").lower() in ALLOWED_FUNCTIONS:
            return sqlite3.SQLITE_OK
        if self.denied is None:
            self.denied = _describe(action, a1, a2)
        return sqlite3.SQLITE_DENY

    def progress(self) -> int:
        self.chunks += 1
        return 1 if self._over() else 0

    def _over(self) -> bool:
        """Whether the step budget or the wall-clock backstop is spent (checked at every
        chunk: one step may call a function that takes long, so a chunk can too)."""
        steps = self.chunks * self.limits.op_chunk + self.charged
        if steps > self.limits.max_ops or time.monotonic() > self.deadline:
            # one detail for both limits: the verdict must not say which one fired first
            limits = self.limits
            self.stopped = f"over the budget ({limits.max_ops:,} VM steps or {limits.wall_s:g} s)"
        return self.stopped is not None


_ACTIONS = {
    getattr(sqlite3, f"SQLITE_{n}"): n.lower()
    for n in ("INSERT", "UPDATE", "DELETE", "PRAGMA", "ATTACH", "DETACH", "TRANSACTION",
              "SAVEPOINT", "RECURSIVE", "CREATE_TABLE", "DROP_TABLE", "ALTER_TABLE")
}  # fmt: skip
"""Names of the denied actions worth naming (result codes share numbers: no ``dir``)."""


def _describe(action: int, a1: str | None, a2: str | None) -> str:
    if action == sqlite3.SQLITE_FUNCTION:
        return f"function {a2}"
    if action == sqlite3.SQLITE_READ:
        return f"read of {a1}"
    name = _ACTIONS.get(action, f"action {action}")
    return " ".join(x for x in (name, a1, a2) if x)[:_DETAIL]


def connect_readonly(fixture: SqlFixture, limits: SqlLimits) -> sqlite3.Connection:
    """A connection to ``fixture`` that can only read (see the module docstring); the
    authorizer and progress handler are installed per query by ``run_query``."""
    conn = sqlite3.connect(fixture.uri, uri=True, check_same_thread=False)
    restrict(conn, limits)
    return conn


def restrict(conn: sqlite3.Connection, limits: SqlLimits) -> None:
    """``conn`` made query-only, with sorts spilled to files and SQLite's limits capped."""
    conn.execute("PRAGMA query_only=ON")
    conn.execute("PRAGMA temp_store=FILE")  # sorts and temporary b-trees spill to disk
    caps = {"ATTACHED": 0, "LENGTH": limits.max_cell_bytes, "EXPR_DEPTH": 100,
            "SQL_LENGTH": limits.max_sql_chars + 16, "COMPOUND_SELECT": 50,
            "FUNCTION_ARG": 16, "LIKE_PATTERN_LENGTH": 200,
            "COLUMN": limits.max_columns}  # fmt: skip
    for name, value in caps.items():
        conn.setlimit(getattr(sqlite3, f"SQLITE_LIMIT_{name}"), value)


def _tables(conn: sqlite3.Connection) -> frozenset[str]:
    rows = conn.execute("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')")
    return frozenset(str(r[0]).lower() for r in rows)


def _blank_comment(lexeme: re.Match[str]) -> str:
    return " " if lexeme[0][:2] in ("--", "/*") else lexeme[0]


def precheck(sql: str, limits: SqlLimits) -> str:
    """``sql`` without a trailing ``;``, or ``QueryRefused`` for the lexical refusals. The
    checks read the query with its comments blanked out (string literals kept), so a
    comment can neither hide a leading keyword nor split a clock call."""
    sql = sql.strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    if len(sql) > limits.max_sql_chars:
        raise QueryRefused("too_long", f"{len(sql)} characters > {limits.max_sql_chars}")
    if not sql:
        raise QueryRefused("no_answer")
    code = _QUOTED_OR_COMMENT.sub(_blank_comment, sql)
    word = _FIRST_WORD.match(code)
    if word is None or word[1].upper() not in ("SELECT", "WITH", "VALUES"):
        first = word[1].upper() if word else code.strip()[:20]
        raise QueryRefused("not_a_select", f"the statement starts with {first}")
    if _NOW.search(code) or _CLOCK.search(code):
        raise QueryRefused("nondeterministic", "the result would depend on the clock")
    return sql


def run_query(fixture: SqlFixture, sql: str, limits: SqlLimits | None = None) -> QueryResult:
    """Run one query read-only under ``limits``; ``QueryRefused`` if refused or stopped."""
    limits = limits or SqlLimits()
    sql = precheck(sql, limits)
    conn = connect_readonly(fixture, limits)
    guard = Guard(frozenset(), limits)
    helper = private_helper(conn)
    budget = (guard.charge, guard.saw_raise)
    install_clockless(conn, helper, budget)
    install_charged(conn, helper, budget)
    try:
        guard.tables = fixture.tables or _tables(conn)
        return run_guarded(conn, guard, sql)
    finally:
        conn.close()
        helper.close()


def run_guarded(conn: sqlite3.Connection, guard: Guard, sql: str) -> QueryResult:
    """``sql`` (as ``precheck`` returned it) on ``conn`` (``restrict``-ed, its overridden
    functions charging ``guard``) with ``guard`` as its authorizer and progress handler;
    ``QueryRefused`` if refused or stopped. ``run_query``'s steps once its connection is
    open, shared by ``sql_trusted``."""
    limits = guard.limits
    guard.deadline = time.monotonic() + limits.wall_s
    conn.set_authorizer(guard.authorize)
    conn.set_progress_handler(guard.progress, limits.op_chunk)
    try:
        cur = conn.execute(sql)
        rows = _fetch(cur, limits)
    except sqlite3.ProgrammingError as err:
        if "one statement" in str(err):
            raise QueryRefused("multiple_statements") from None
        raise QueryRefused("sql_error", str(err)) from None
    except sqlite3.Error as err:
        raise _classify(err, guard) from None
    if len(rows) > limits.max_rows:
        raise QueryRefused("too_many_rows", f"more than {limits.max_rows} rows")
    columns = tuple(str(d[0]) for d in cur.description or ())
    return QueryResult(columns, tuple(tuple(r) for r in rows))


def _fetch(cur: sqlite3.Cursor, limits: SqlLimits) -> list[Any]:
    """Up to ``max_rows + 1`` rows, one at a time, ``too_large`` past ``max_result_bytes``
    (a row is at most ``max_columns`` capped cells, so memory stays bounded)."""
    rows: list[Any] = []
    size = 0
    while len(rows) <= limits.max_rows and (row := cur.fetchone()) is not None:
        size += sum(len(c) for c in row if isinstance(c, str | bytes))
        if size > limits.max_result_bytes:
            raise QueryRefused("too_large", f"more than {limits.max_result_bytes:,} bytes")
        rows.append(row)
    return rows


def _classify(err: sqlite3.Error, guard: Guard) -> QueryRefused:
    text = str(err)
    if guard.stopped is not None:
        return QueryRefused("too_slow", guard.stopped)
    if isinstance(guard.raised, ClockRead):
        function = guard.raised.function
        return QueryRefused("nondeterministic", f"{function}() read the clock or time zone")
    if isinstance(guard.raised, sqlite3.Error):  # SQLite's own error inside an override
        text = str(guard.raised)
    if guard.denied is not None or "not authorized" in text:
        return QueryRefused("refused", guard.denied or text)
    if "too big" in text or "too large" in text or "too many columns" in text:
        return QueryRefused("too_large", text)
    if "readonly" in text or "read-only" in text:
        return QueryRefused("refused", text)
    return QueryRefused("sql_error", text)
