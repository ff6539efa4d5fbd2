"""Typed table declarations: the one schema language of gymforge, and the DDL generated from it.

A world is a handful of tables, each with a primary key. Tables whose name starts with
``_`` are *system* tables (idempotency records and the like): they are reset and
fingerprinted with the world but never count as a changed table in a diff. A world's
``Schema`` always has the ``IDEMPOTENCY`` system table; other databases (the SQL
environment's generated ones) pass ``system_tables=()``.

Two DDL forms: ``ddl()`` (compact statements for building a database) and
``documented_ddl()`` (one column per line with its ``doc`` as a comment, what an agent reads).
Environments extend ``Column`` and ``Table`` with their own fields (how values are generated,
how a question names them) rather than declaring tables a second way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

ColumnType = Literal["TEXT", "INTEGER", "REAL"]


@dataclass(frozen=True)
class Column:
    """A column; ``references`` names the table whose primary key it holds (a foreign key),
    ``doc`` says what it means (shown by ``Schema.documented_ddl``)."""

    name: str
    type: ColumnType = "TEXT"
    nullable: bool = True
    doc: str = ""
    references: str = ""


@dataclass(frozen=True)
class Table:
    """A table; ``pk`` names its primary-key column, ``indexes`` extra lookups, and
    ``fulltext`` the TEXT columns of its SQLite FTS5 index (``gymforge.world.search``)."""

    name: str
    columns: tuple[Column, ...]
    pk: str = "id"
    indexes: tuple[str, ...] = ()
    fulltext: tuple[str, ...] = ()
    column_names: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _known: frozenset[str] = field(init=False, repr=False, compare=False)
    _insert: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = tuple(c.name for c in self.columns)
        object.__setattr__(self, "column_names", names)
        object.__setattr__(self, "_known", frozenset(names))
        object.__setattr__(
            self,
            "_insert",
            f"INSERT INTO {self.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        )
        if self.pk not in names:
            raise ValueError(f"table {self.name}: primary key {self.pk!r} is not a column")
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: duplicate column names")
        unknown = [c for c in self.fulltext if c not in names]
        if unknown:
            raise ValueError(f"table {self.name}: full-text columns {unknown} are not columns")

    @property
    def system(self) -> bool:
        return self.name.startswith("_")

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name} has no column {name!r}")

    def ddl(self) -> list[str]:
        cols = ", ".join(
            f"{c.name} {c.type}"
            + (" PRIMARY KEY" if c.name == self.pk else "")
            + ("" if c.nullable or c.name == self.pk else " NOT NULL")
            + (f" REFERENCES {c.references}" if c.references else "")
            for c in self.columns
        )
        out = [f"CREATE TABLE {self.name} ({cols})"]
        out += [f"CREATE INDEX ix_{self.name}_{ix} ON {self.name} ({ix})" for ix in self.indexes]
        if self.fulltext:
            out.append(
                f"CREATE VIRTUAL TABLE {self.fts} USING fts5({', '.join(self.fulltext)}, "
                f"content='{self.name}', tokenize='porter unicode61')"
            )
        return out

    @property
    def fts(self) -> str:
        """The name of the table's FTS5 index (when it has ``fulltext`` columns)."""
        return f"{self.name}_fts"

    def fulltext_ddl(self) -> list[str]:
        """What makes the table's FTS5 index (external content, porter-stemmed, ranked by
        ``bm25()``) current and keeps it so: a bulk ``rebuild`` from the rows, then triggers on
        insert, update and delete. Run after loading the rows (``gymforge.world.db.rebuild``
        does): indexing row by row through the triggers is ~15x slower than one rebuild."""
        if not self.fulltext:
            return []
        cols = ", ".join(self.fulltext)
        new = ", ".join(f"new.{c}" for c in self.fulltext)
        old = ", ".join(f"old.{c}" for c in self.fulltext)
        fts, n = self.fts, self.name
        drop = f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old});"
        add = f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.rowid, {new});"
        return [
            f"INSERT INTO {fts}({fts}) VALUES ('rebuild')",
            f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {n} BEGIN {add} END",
            f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {n} BEGIN {drop} END",
            f"CREATE TRIGGER {fts}_au AFTER UPDATE ON {n} BEGIN {drop} {add} END",
        ]

    def insert_sql(self) -> str:
        return self._insert

    def row_tuple(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        if not self._known.issuperset(row):
            unknown = set(row) - self._known
            raise ValueError(f"table {self.name}: unknown columns {sorted(unknown)}")
        return tuple(row.get(c) for c in self.column_names)


def table(
    name: str,
    *columns: str | Column,
    pk: str = "id",
    indexes: Sequence[str] = (),
    fulltext: Sequence[str] = (),
) -> Table:
    """Shorthand: ``table("refunds", "id", "payment_id", Column("amount_cents", "INTEGER"))``;
    a plain name is a nullable TEXT column, ``name:int`` an INTEGER one."""
    cols = []
    for c in columns:
        if isinstance(c, Column):
            cols.append(c)
        elif c.endswith(":int"):
            cols.append(Column(c[:-4], "INTEGER"))
        else:
            cols.append(Column(c))
    return Table(name, tuple(cols), pk, tuple(indexes), tuple(fulltext))


IDEMPOTENCY = table("_idempotency", "key", "tool", "request", "response", "acked:int", pk="key")
"""The system table of write idempotency records (see ``gymforge.world.writes``)."""


@dataclass(frozen=True)
class Schema:
    """The tables of a database; ``system_tables`` (by default ``IDEMPOTENCY``, which a world
    needs for its writes) are added after them unless already declared."""

    tables: tuple[Table, ...]
    system_tables: tuple[Table, ...] = field(default=(IDEMPOTENCY,), kw_only=True, repr=False)

    def __post_init__(self) -> None:
        declared = {t.name for t in self.tables}
        extra = tuple(t for t in self.system_tables if t.name not in declared)
        if extra:
            object.__setattr__(self, "tables", (*self.tables, *extra))
        names = [t.name for t in self.tables]
        if len(set(names)) != len(names):
            raise ValueError("duplicate table names")

    def __getitem__(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def ddl(self) -> list[str]:
        return [stmt for t in self.tables for stmt in t.ddl()]

    @property
    def fulltext(self) -> bool:
        """Whether any table has a full-text index."""
        return any(t.fulltext for t in self.tables)

    def documented_ddl(self, visible: Callable[[Table], Sequence[Column]] | None = None) -> str:
        """``CREATE TABLE`` statements with one column per line and its ``doc`` as a comment;
        ``visible`` picks each table's columns (default: all)."""
        blocks = []
        for t in self.tables:
            cols = tuple(visible(t)) if visible is not None else t.columns
            lines = []
            for i, c in enumerate(cols):
                extra = " PRIMARY KEY" if c.name == t.pk else ""
                if c.references:
                    extra = f" REFERENCES {c.references}({self[c.references].pk})"
                if not c.nullable and c.name != t.pk:
                    extra += " NOT NULL"
                comma = "," if i < len(cols) - 1 else ""
                note = f"  -- {c.doc}" if c.doc else ""
                lines.append(f"  {c.name} {c.type}{extra}{comma}{note}")
            blocks.append(f"CREATE TABLE {t.name} (\n" + "\n".join(lines) + "\n);")
        return "\n".join(blocks)
