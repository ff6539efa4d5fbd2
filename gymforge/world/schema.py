"""Typed table declarations: the schema of a world, and the DDL generated from it.

A world is a handful of tables, each with a text primary key. Tables whose name starts with
``_`` are *system* tables (idempotency records and the like): they are reset and
fingerprinted with the world but never count as a changed table in a diff.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

ColumnType = Literal["TEXT", "INTEGER"]


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType = "TEXT"
    nullable: bool = True


@dataclass(frozen=True)
class Table:
    """A table; ``pk`` names its (text) primary-key column, ``indexes`` extra lookups."""

    name: str
    columns: tuple[Column, ...]
    pk: str = "id"
    indexes: tuple[str, ...] = ()
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

    @property
    def system(self) -> bool:
        return self.name.startswith("_")

    def ddl(self) -> list[str]:
        cols = ", ".join(
            f"{c.name} {c.type}"
            + (" PRIMARY KEY" if c.name == self.pk else "")
            + ("" if c.nullable or c.name == self.pk else " NOT NULL")
            for c in self.columns
        )
        out = [f"CREATE TABLE {self.name} ({cols})"]
        out += [f"CREATE INDEX ix_{self.name}_{ix} ON {self.name} ({ix})" for ix in self.indexes]
        return out

    def insert_sql(self) -> str:
        return self._insert

    def row_tuple(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        if not self._known.issuperset(row):
            unknown = set(row) - self._known
            raise ValueError(f"table {self.name}: unknown columns {sorted(unknown)}")
        return tuple(row.get(c) for c in self.column_names)


def table(name: str, *columns: str | Column, pk: str = "id", indexes: Sequence[str] = ()) -> Table:
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
    return Table(name, tuple(cols), pk, tuple(indexes))


IDEMPOTENCY = table("_idempotency", "key", "tool", "request", "response", "acked:int", pk="key")
"""The system table of write idempotency records (see ``gymforge.world.writes``)."""


@dataclass(frozen=True)
class Schema:
    """The tables of a world. ``IDEMPOTENCY`` is always added."""

    tables: tuple[Table, ...]

    def __post_init__(self) -> None:
        if not any(t.name == IDEMPOTENCY.name for t in self.tables):
            object.__setattr__(self, "tables", (*self.tables, IDEMPOTENCY))
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
