"""``SqlFamily``: one schema's text-to-SQL tasks, with two databases per task.

Knobs: ``joins`` (0-2 keys walked), ``agg`` (0/1), ``nest`` (0/1 subquery),
``distractors`` (0-3 misleading extra columns) and ``size`` (row-count multiplier 1-3).
Levels: d1 single-table questions; d2 joins, aggregates, grouping; d3 nested subqueries
over bigger databases with more distractors. A family held out whole uses levels 4-6 for
the same three regions, so that no training family's level is also a held-out one.

``build`` draws the distractor columns and a seed for the **main** database (the one whose
schema and first rows the prompt shows), then questions until one is *discriminating*:
its gold result on the main database is non-empty, has no NULL, is at most ``MAX_ROWS``
rows and is not every row of the table it lists; a **shadow** database (same schema,
other rows, its own seed) gives a different gold result, informative by the same rules (a
query can tell the shown database by its row counts, and answer nothing or 0 elsewhere:
``tests/redteam/test_sql_degenerate_shadow_red18e.py``); and no near miss of the question
(``Question.near_misses``: its filter dropped, an inclusive bound read as strict) gives
the gold result on both databases (a filter that decides nothing on them would pay a
query that ignores it: ``tests/redteam/test_sql_vacuous_filter_red18e.py``). The verifier
runs the answer on both, so a query that hard-codes the main database's answer fails on
the shadow.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gymforge.envs.sql.questions import Drawer, Question
from gymforge.envs.sql.schema import (
    Rows,
    SqlSchema,
    build_database,
    ddl,
    fill_database,
    generate_rows,
    sample_rows,
)
from gymforge.envs.sql.schemas import SCHEMAS
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.verify.sql import QueryRefused, SqlFixture, compare_results
from gymforge.verify.sql_trusted import TrustedDatabase

MAX_ROWS = 25
MAX_TRIES = 80
LIST_KINDS = frozenset({"list", "having", "above_avg", "not_in"})

INSTRUCTIONS = (
    "Write one SQLite SELECT query that answers the question. It will be run read-only on "
    "this database and on other databases with the same schema but different rows, and its "
    "result compared with the correct result: rows in any order unless the question asks "
    "for an order; column names do not matter, but return exactly the columns asked for, "
    "and do not round numbers. End your reply with the query in a ```sql fenced block; "
    "nothing may follow it."
)


def levels(offset: int = 0) -> dict[int, ParamSpace]:
    def space(
        joins: tuple[int, ...],
        agg: tuple[int, ...],
        nest: int,
        dis: tuple[int, int],
        size: tuple[int, int],
    ) -> ParamSpace:
        return ParamSpace(
            {
                "joins": ChoiceKnob(joins),
                "agg": ChoiceKnob(agg),
                "nest": ChoiceKnob((nest,)),
                "distractors": IntKnob(*dis),
                "size": IntKnob(*size),
            }
        )

    return {
        1 + offset: space((0,), (0, 1), 0, (0, 1), (1, 1)),
        2 + offset: space((1, 2), (0, 1), 0, (1, 2), (1, 2)),
        3 + offset: space((0, 1, 2), (0, 1), 1, (2, 3), (2, 3)),
    }


class SqlTruth(BaseModel):
    """A SQL task's hidden truth: how to regenerate its two databases (the main one the
    prompt shows, and a shadow one that catches answers fitted to it) and the gold query."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_name: str = Field(alias="schema")
    distractors: list[str]
    size: int
    data_seed: int
    shadow_seed: int
    sql: str
    ordered: bool
    kind: str
    start: str


@dataclass
class SqlFamily(TaskFamily[SqlTruth]):
    """Tasks over the schema named by the family (``sql.<schema>``). ``strict`` (from
    version 2; version 1's task ids still resolve to the tasks it drew without it): the
    shadow's gold result must be informative too, and no near miss may give the gold
    result on both databases."""

    strict: bool = field(default=True, kw_only=True)

    @property
    def schema(self) -> SqlSchema:
        return SCHEMAS[self.name.split(".", 1)[1]]

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, SqlTruth]:
        schema = self.schema
        picks = r.sample(schema.distractor_columns(), params["distractors"])
        distractors = sorted(f"{t}.{c}" for t, c in picks)
        data_seed = r.randrange(2**31)
        main, rows = _drawn(schema, distractors, params["size"], data_seed)
        shadow_seed = r.randrange(2**31)
        shadow, shadow_rows = _drawn(schema, distractors, params["size"], shadow_seed)
        drawer = Drawer(schema, distractors, rows)
        for attempt in range(MAX_TRIES):
            if attempt and attempt % 16 == 0:  # this pair of databases may agree too often
                shadow_seed = r.randrange(2**31)
                shadow, shadow_rows = _drawn(schema, distractors, params["size"], shadow_seed)
            q = drawer.draw(params["joins"], params["agg"], params["nest"], r)
            if q is None:
                continue
            sizes = (len(rows[q.start]), len(shadow_rows[q.start]))
            if not self._discriminating(q, main, shadow, sizes):
                continue
            truth = SqlTruth(
                schema=schema.name,
                distractors=distractors,
                size=params["size"],
                data_seed=data_seed,
                shadow_seed=shadow_seed,
                sql=q.sql,
                ordered=q.ordered,
                kind=q.kind,
                start=q.start,
            )
            return self.prompt(schema, distractors, rows, q), truth
        raise RuntimeError(f"{self.name}: no discriminating question for {params}")

    def _discriminating(
        self,
        q: Question,
        main: TrustedDatabase,
        shadow: TrustedDatabase,
        table_rows: tuple[int, int],
    ) -> bool:
        """Whether ``q`` tells right answers from wrong ones on ``main`` and ``shadow``,
        whose ``q.start`` tables hold ``table_rows`` rows (module docstring)."""
        try:
            want = main.query(q.sql)
            other = shadow.query(q.sql)
        except QueryRefused:
            return False
        if not _informative(q, want, table_rows[0]):
            return False
        if compare_results(other, want, ordered=q.ordered) is None:
            return False
        if not self.strict:
            return True
        if not _informative(q, other, table_rows[1]):
            return False
        return not any(_agrees(sql, q, (main, want), (shadow, other)) for sql in q.near_misses)

    @staticmethod
    def prompt(schema: SqlSchema, distractors: list[str], rows: Any, q: Question) -> str:
        return (
            f"A SQLite database ({schema.name}) has these tables:\n\n"
            f"{ddl(schema, distractors)}\n\n{sample_rows(schema, distractors, rows)}\n\n"
            f"Question: {q.text}\n\n{INSTRUCTIONS}"
        )


def _informative(q: Question, result: Any, table_rows: int) -> bool:
    """Whether ``result`` tells a right query from an empty or constant one: rows, at most
    ``MAX_ROWS``, no NULL, not a lone 0, and for a list not every row of its table."""
    rows = result.rows
    if not rows or len(rows) > MAX_ROWS or any(c is None for row in rows for c in row):
        return False
    if q.kind in LIST_KINDS and len(rows) >= table_rows:
        return False
    return not (len(rows) == 1 and rows[0][0] == 0)


def _agrees(sql: str, q: Question, *runs: tuple[TrustedDatabase, Any]) -> bool:
    """Whether the near miss ``sql`` gives the gold result on every database of ``runs``
    (``(database, gold result)``): then the question, on these databases, pays it."""
    for db, want in runs:
        try:
            got = db.query(sql)
        except QueryRefused:
            return False
        if compare_results(got, want, ordered=q.ordered) is not None:
            return False
    return True


TABLES = {name: [t.name for t in s.tables] for name, s in SCHEMAS.items()}


def _drawn(
    schema: SqlSchema, distractors: list[str], size: int, seed: int
) -> tuple[TrustedDatabase, Rows]:
    """The database of ``seed`` and its rows, for the family's own queries only: in memory,
    one connection for all of them (``sql_trusted``; an answer's databases are private
    files that ``run_query`` opens: ``database``)."""
    rows = generate_rows(schema, distractors, size, seed)

    def fill(conn: sqlite3.Connection) -> None:
        fill_database(conn, schema, distractors, rows)

    return TrustedDatabase(fill, TABLES[schema.name]), rows


def _database(schema_name: str, distractors: list[str], size: int, seed: int) -> SqlFixture:
    schema = SCHEMAS[schema_name]
    rows = generate_rows(schema, distractors, size, seed)
    return SqlFixture.from_bytes(build_database(schema, distractors, rows), TABLES[schema_name])


def database(truth: SqlTruth, seed: int) -> SqlFixture:
    """The task's database generated from ``seed`` (its ``data_seed`` or ``shadow_seed``)."""
    return _database(truth.schema_name, truth.distractors, truth.size, seed)


def fixtures(truth: SqlTruth) -> list[SqlFixture]:
    """The task's databases: the main one (shown in the prompt), then the shadow one."""
    return [database(truth, truth.data_seed), database(truth, truth.shadow_seed)]


def _family(name: str, space: dict[int, ParamSpace]) -> SqlFamily:
    """Version 2 (near misses must fail), with version 1 for its task ids."""
    v1 = SqlFamily(name, 1, space, strict=False)
    return SqlFamily(name, 2, space, older={1: v1})


FAMILIES: tuple[SqlFamily, ...] = (
    _family("sql.shop", levels()),
    _family("sql.school", levels()),
    _family("sql.flights", levels(offset=3)),
)
HELD_OUT_FAMILY = "sql.flights"
