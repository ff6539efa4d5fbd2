"""The SQL environment's databases: ``gymforge.world.schema`` tables with generation fields,
and seeded databases generated from them.

A ``SqlSchema`` is tables (``SqlTable``) of ``SqlColumn``s, the world schema language's
``Column``/``Table``/``Schema`` plus what generation and questions need. Column kinds say
how values are generated and how questions may use them: ``id`` (1..n primary key),
``label`` (a unique display name), ``cat`` (a value from ``values``), ``num`` (a price-like
float, 2 decimals, in ``[lo, hi]``), ``int`` (an integer in ``[lo, hi]``), ``date`` (ISO
``YYYY-MM-DD`` within ``lo..hi`` days after 2022-01-01) and ``fk`` (an id of table
``references``; ``fwd``/``back`` are the phrases for walking the key child -> parent and
parent -> child in a question). A kind fixes the column's SQL type (``KIND_TYPES``).

Columns marked ``distractor`` exist only when a task's ``distractors`` knob picks them:
near-synonyms of real columns (``billing_city`` next to ``city``) whose values differ, so a
query that reads the wrong one returns the wrong rows.

``generate_rows(schema, distractors, size, seed)`` draws every value from one RNG seeded by
``seed``; ``build_database`` loads the rows into an in-memory SQLite database and returns
its serialized bytes (a ``SqlFixture``). Nothing touches the filesystem.
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from gymforge.world.schema import Column, ColumnType, Schema, Table

Kind = Literal["id", "label", "cat", "num", "int", "date", "fk"]
BASE_DATE = dt.date(2022, 1, 1)
KIND_TYPES: Mapping[Kind, ColumnType] = {
    "id": "INTEGER",
    "label": "TEXT",
    "cat": "TEXT",
    "num": "REAL",
    "int": "INTEGER",
    "date": "TEXT",
    "fk": "INTEGER",
}

Rows = dict[str, list[tuple[Any, ...]]]


@dataclass(frozen=True)
class SqlColumn(Column):
    """A ``Column`` with its generator (``kind``, ``values``, ``lo``/``hi``) and its words
    in questions (``phrase``; ``fwd``/``back`` for a key)."""

    kind: Kind = field(kw_only=True)
    phrase: str = field(default="", kw_only=True)
    values: tuple[str, ...] = field(default=(), kw_only=True)
    lo: float = field(default=0, kw_only=True)
    hi: float = field(default=0, kw_only=True)
    fwd: str = field(default="", kw_only=True)
    back: str = field(default="", kw_only=True)
    distractor: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        if self.type != KIND_TYPES[self.kind]:
            raise ValueError(f"column {self.name}: a {self.kind} column is {KIND_TYPES[self.kind]}")
        if (self.kind == "fk") != bool(self.references):
            raise ValueError(f"column {self.name}: exactly the fk columns reference a table")


def column(name: str, kind: Kind, doc: str, **kw: Any) -> SqlColumn:
    """A ``SqlColumn`` whose SQL type follows from ``kind``."""
    return SqlColumn(name, KIND_TYPES[kind], doc=doc, kind=kind, **kw)


@dataclass(frozen=True)
class SqlTable(Table):
    """A ``Table`` of ``SqlColumn``s, with its nouns in questions and its row counts."""

    columns: tuple[SqlColumn, ...]
    singular: str = field(default="", kw_only=True)
    plural: str = field(default="", kw_only=True)
    rows: tuple[int, int] = field(default=(8, 12), kw_only=True)
    """Row count range at size 1; size ``s`` multiplies it by ``s``."""

    @property
    def label(self) -> SqlColumn | None:
        return next((c for c in self.columns if c.kind == "label"), None)


@dataclass(frozen=True)
class SqlSchema(Schema):
    """A family of generated databases: its tables (no system tables) and label pools."""

    tables: tuple[SqlTable, ...]
    name: str = field(default="", kw_only=True)
    label_pools: dict[str, tuple[str, ...]] = field(default_factory=dict, kw_only=True)
    """Table name -> candidate labels (at least the largest row count, all distinct)."""
    system_tables: tuple[Table, ...] = field(default=(), kw_only=True, repr=False)

    def table(self, name: str) -> SqlTable:
        return next(t for t in self.tables if t.name == name)

    def distractor_columns(self) -> list[tuple[str, str]]:
        """Every optional column as ``(table, column)``, in declaration order."""
        return [(t.name, c.name) for t in self.tables for c in t.columns if c.distractor]

    def visible(self, table: SqlTable, distractors: Sequence[str]) -> tuple[SqlColumn, ...]:
        """The table's columns in a task that includes ``distractors`` (``table.column``)."""
        chosen = set(distractors)
        return tuple(
            c for c in table.columns if not c.distractor or f"{table.name}.{c.name}" in chosen
        )


# ---- generation --------------------------------------------------------------------------
def _column(col: SqlColumn, n: int, r: random.Random, counts: dict[str, int]) -> list[Any]:
    """``n`` values of ``col``, column-wise (generation is on the reset path: keep it lean)."""
    rnd = r.random
    if col.kind == "cat":
        vals, k = col.values, len(col.values)
        return [vals[int(rnd() * k)] for _ in range(n)]
    if col.kind == "num":
        lo, span = col.lo, col.hi - col.lo
        return [round(lo + rnd() * span, 2) for _ in range(n)]
    if col.kind in ("int", "date", "fk"):
        lo, hi = (1, counts[col.references]) if col.kind == "fk" else (int(col.lo), int(col.hi))
        ints = [lo + int(rnd() * (hi - lo + 1)) for _ in range(n)]
        if col.kind != "date":
            return ints
        return [(BASE_DATE + dt.timedelta(days=d)).isoformat() for d in ints]
    raise ValueError(f"no generator for {col.kind}")


def generate_rows(schema: SqlSchema, distractors: Sequence[str], size: int, seed: int) -> Rows:
    """Every table's rows (tuples in visible-column order), deterministic in the inputs.
    Tables are generated in declaration order, so parents precede their children."""
    r = random.Random(seed)
    counts: dict[str, int] = {}
    out: Rows = {}
    for table in schema.tables:
        lo, hi = table.rows
        n = r.randint(lo * size, hi * size)
        counts[table.name] = n
        columns: list[list[Any]] = []
        for col in schema.visible(table, distractors):
            if col.kind == "id":
                columns.append(list(range(1, n + 1)))
            elif col.kind == "label":
                columns.append(r.sample(schema.label_pools[table.name], n))
            else:
                columns.append(_column(col, n, r, counts))
        out[table.name] = list(zip(*columns, strict=True))
    return out


def ddl(schema: SqlSchema, distractors: Sequence[str]) -> str:
    """``CREATE TABLE`` statements with one comment per column (what the agent reads)."""
    return schema.documented_ddl(lambda t: schema.visible(schema.table(t.name), distractors))


def build_database(schema: SqlSchema, distractors: Sequence[str], rows: Rows) -> bytes:
    """A serialized SQLite database holding ``rows``."""
    conn = sqlite3.connect(":memory:")
    try:
        fill_database(conn, schema, distractors, rows)
        return conn.serialize()
    finally:
        conn.close()


def fill_database(
    conn: sqlite3.Connection, schema: SqlSchema, distractors: Sequence[str], rows: Rows
) -> None:
    """Create the tables in ``conn``'s empty main database and insert ``rows``, committed
    (``build_database``'s, and a family's own in-memory ones: ``SqlFamily.build``)."""
    conn.executescript(ddl(schema, distractors))
    for table in schema.tables:
        width = len(schema.visible(table, distractors))
        marks = ",".join("?" * width)
        conn.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows[table.name])
    conn.commit()


def sample_rows(schema: SqlSchema, distractors: Sequence[str], rows: Rows, k: int = 3) -> str:
    """The first ``k`` rows of every table as ``a | b | c`` lines under a header."""
    blocks = []
    for table in schema.tables:
        names = [c.name for c in schema.visible(table, distractors)]
        body = [" | ".join(_show(v) for v in row) for row in rows[table.name][:k]]
        total = len(rows[table.name])
        head = f"{table.name} (first {min(k, total)} of {total} rows):"
        blocks.append("\n".join([head, " | ".join(names), *body]))
    return "\n\n".join(blocks)


def _show(v: Any) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)
