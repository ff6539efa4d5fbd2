"""A small declarative schema language, and seeded databases generated from it.

A ``Schema`` is tables of typed ``Column``s. Column kinds say how values are generated and
how questions may use them: ``id`` (1..n primary key), ``label`` (a unique display name),
``cat`` (a value from ``values``), ``num`` (a price-like float, 2 decimals, in
``[lo, hi]``), ``int`` (an integer in ``[lo, hi]``), ``date`` (ISO ``YYYY-MM-DD`` within
``lo..hi`` days after 2022-01-01) and ``fk`` (an id of table ``ref``; ``fwd``/``back`` are
the phrases for walking the key child -> parent and parent -> child in a question).

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["id", "label", "cat", "num", "int", "date", "fk"]
BASE_DATE = dt.date(2022, 1, 1)
_SQL_TYPE = {"id": "INTEGER", "fk": "INTEGER", "int": "INTEGER", "num": "REAL"}

Rows = dict[str, list[tuple[Any, ...]]]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    doc: str
    phrase: str = ""
    values: tuple[str, ...] = ()
    lo: float = 0
    hi: float = 0
    ref: str = ""
    fwd: str = ""
    back: str = ""
    distractor: bool = False

    @property
    def sql_type(self) -> str:
        return _SQL_TYPE.get(self.kind, "TEXT")


@dataclass(frozen=True)
class Table:
    name: str
    singular: str
    plural: str
    columns: tuple[Column, ...]
    rows: tuple[int, int] = (8, 12)
    """Row count range at size 1; size ``s`` multiplies it by ``s``."""

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def label(self) -> Column | None:
        return next((c for c in self.columns if c.kind == "label"), None)


@dataclass(frozen=True)
class Schema:
    name: str
    tables: tuple[Table, ...]
    label_pools: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Table name -> candidate labels (at least the largest row count, all distinct)."""

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def distractor_columns(self) -> list[tuple[str, str]]:
        """Every optional column as ``(table, column)``, in declaration order."""
        return [(t.name, c.name) for t in self.tables for c in t.columns if c.distractor]

    def visible(self, table: Table, distractors: Sequence[str]) -> tuple[Column, ...]:
        """The table's columns in a task that includes ``distractors`` (``table.column``)."""
        chosen = set(distractors)
        return tuple(
            c for c in table.columns if not c.distractor or f"{table.name}.{c.name}" in chosen
        )


# ---- generation --------------------------------------------------------------------------
def _column(col: Column, n: int, r: random.Random, counts: dict[str, int]) -> list[Any]:
    """``n`` values of ``col``, column-wise (generation is on the reset path: keep it lean)."""
    rnd = r.random
    if col.kind == "cat":
        vals, k = col.values, len(col.values)
        return [vals[int(rnd() * k)] for _ in range(n)]
    if col.kind == "num":
        lo, span = col.lo, col.hi - col.lo
        return [round(lo + rnd() * span, 2) for _ in range(n)]
    if col.kind in ("int", "date", "fk"):
        lo, hi = (1, counts[col.ref]) if col.kind == "fk" else (int(col.lo), int(col.hi))
        ints = [lo + int(rnd() * (hi - lo + 1)) for _ in range(n)]
        if col.kind != "date":
            return ints
        return [(BASE_DATE + dt.timedelta(days=d)).isoformat() for d in ints]
    raise ValueError(f"no generator for {col.kind}")


def generate_rows(schema: Schema, distractors: Sequence[str], size: int, seed: int) -> Rows:
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


def ddl(schema: Schema, distractors: Sequence[str]) -> str:
    """``CREATE TABLE`` statements with one comment per column (what the agent reads)."""
    blocks = []
    for table in schema.tables:
        cols = schema.visible(table, distractors)
        lines = []
        for i, c in enumerate(cols):
            extra = " PRIMARY KEY" if c.kind == "id" else ""
            if c.kind == "fk":
                extra = f" REFERENCES {c.ref}(id)"
            comma = "," if i < len(cols) - 1 else ""
            lines.append(f"  {c.name} {c.sql_type}{extra}{comma}  -- {c.doc}")
        blocks.append(f"CREATE TABLE {table.name} (\n" + "\n".join(lines) + "\n);")
    return "\n".join(blocks)


def build_database(schema: Schema, distractors: Sequence[str], rows: Rows) -> bytes:
    """A serialized SQLite database holding ``rows``."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(ddl(schema, distractors))
        for table in schema.tables:
            width = len(schema.visible(table, distractors))
            marks = ",".join("?" * width)
            conn.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows[table.name])
        conn.commit()
        return conn.serialize()
    finally:
        conn.close()


def sample_rows(schema: Schema, distractors: Sequence[str], rows: Rows, k: int = 3) -> str:
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
