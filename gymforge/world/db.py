"""SQLite world state: template snapshots, fast reset, canonical snapshots and row diffs.

A task's seed rows are loaded once into a *template* (an in-memory database serialised to
bytes, cached per task in a small LRU). Every episode then restores the template into its
connection with ``sqlite3.Connection.deserialize``: a few microseconds, against milliseconds
for ``CREATE`` + ``INSERT`` (``benchmarks/world_reset.py`` measures both).

``WorldDB.snapshot()`` is the canonical JSON state (the template's digest plus the delta
from it, normalised; see ``gymforge.world.state``) and ``WorldDB.diff()`` the rows added,
updated and removed per table since the template, for verifiers.
"""

from __future__ import annotations

import random
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.seeding import fingerprint
from gymforge.world.clock import IdGen, SimClock
from gymforge.world.schema import Schema
from gymforge.world.state import Delta, Diff, TableDiff, rows_by_pk

Row = dict[str, Any]
__all__ = ["Diff", "TableDiff", "Template", "TemplateCache", "WorldDB", "rebuild"]


def rebuild(
    schema: Schema, data: Mapping[str, Sequence[Mapping[str, Any]]], empty: bytes | None = None
) -> sqlite3.Connection:
    """A fresh in-memory database with ``data`` inserted. Without ``empty`` (the naive path)
    the tables are created with DDL; with it, from that serialised empty schema."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    if empty is not None:
        conn.deserialize(empty)
    conn.execute("BEGIN")
    if empty is None:
        for stmt in schema.ddl():
            conn.execute(stmt)
    for name, rows in data.items():
        t = schema[name]
        conn.executemany(t.insert_sql(), [t.row_tuple(r) for r in rows])
    for t in schema.tables:  # full-text indexes: one bulk build, then triggers keep them
        for stmt in t.fulltext_ddl():
            conn.execute(stmt)
    conn.execute("COMMIT")
    return conn


_EMPTY: dict[int, tuple[Schema, bytes]] = {}


def empty_schema(schema: Schema) -> bytes:
    """The serialised empty database of ``schema``, built once per schema object (parsing
    DDL costs more than inserting a task's rows)."""
    found = _EMPTY.get(id(schema))
    if found is None or found[0] is not schema:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        for stmt in schema.ddl():  # no full-text triggers yet: ``rebuild`` adds them
            conn.execute(stmt)
        found = _EMPTY[id(schema)] = (schema, conn.serialize())
        conn.close()
    return found[1]


@dataclass(frozen=True)
class Template:
    """A task's initial world: the serialised database and a digest of its seed rows. The
    rows themselves are read back on first need (a diff or a snapshot after a change);
    episodes that change nothing never pay for it."""

    schema: Schema
    blob: bytes
    digest: str
    _rows: dict[str, dict[Any, tuple[Any, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def build(cls, schema: Schema, data: Mapping[str, Sequence[Mapping[str, Any]]]) -> Template:
        conn = rebuild(schema, data, empty_schema(schema))
        try:
            blob = conn.serialize()
        finally:
            conn.close()
        digest = fingerprint(
            {name: [schema[name].row_tuple(r) for r in rows] for name, rows in sorted(data.items())}
        )
        return cls(schema, blob, digest)

    def rows(self, table: str) -> dict[Any, tuple[Any, ...]]:
        """The table's initial rows by primary key."""
        found = self._rows.get(table)
        if found is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            try:
                conn.deserialize(self.blob)
                for t in self.schema.tables:
                    self._rows[t.name] = rows_by_pk(conn, t)
            finally:
                conn.close()
            found = self._rows[table]
        return found


class TemplateCache:
    """A small LRU of templates keyed by task (templates are immutable, so sharing them
    across episodes and instances leaks nothing)."""

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[str, Template] = OrderedDict()

    def get(self, key: str, build: Callable[[], Template]) -> Template:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            return found
        made = self._items[key] = build()
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)
        return made

    def __len__(self) -> int:
        return len(self._items)


class WorldDB:
    """One episode's world on a reusable in-memory connection. Load a template to reset."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.template: Template | None = None
        self.ids = IdGen(random.Random(0))
        self.clock = SimClock(0, random.Random(0))
        self._snap: tuple[int, dict[str, Any]] | None = None
        self._depth = 0
        self._base = 0
        self._own = 0
        self.delta: Delta | None = None

    def load(self, template: Template, ids: IdGen, clock: SimClock) -> None:
        """Reset: the database becomes the template again; ids and time start afresh.

        A world with a full-text index gets a fresh connection: FTS5 caches its index
        structure per connection and would read the restored pages through a stale cache."""
        if template.schema.fulltext:
            self.conn.close()
            self.conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.conn.deserialize(template.blob)
        self.template, self.ids, self.clock = template, ids, clock
        self._snap = None
        self._depth = 0
        self._base, self._own = self.conn.total_changes, 0
        self.delta = Delta(template)

    @property
    def schema(self) -> Schema:
        assert self.template is not None, "no template loaded"
        return self.template.schema

    # ---- queries ------------------------------------------------------------------------
    def all(self, sql: str, *params: Any) -> list[Row]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def one(self, sql: str, *params: Any) -> Row | None:
        cur = self.conn.execute(sql, params)
        r = cur.fetchone()
        return None if r is None else dict(zip([d[0] for d in cur.description], r, strict=True))

    def scalar(self, sql: str, *params: Any) -> Any:
        r = self.conn.execute(sql, params).fetchone()
        return None if r is None else r[0]

    def get(self, table: str, pk: Any) -> Row | None:
        t = self.schema[table]
        return self.one(f"SELECT * FROM {t.name} WHERE {t.pk} = ?", pk)

    # ---- changes ------------------------------------------------------------------------
    def insert(self, table: str, row: Mapping[str, Any]) -> None:
        t = self.schema[table]
        self._track(table, row.get(t.pk), self.conn.execute(t.insert_sql(), t.row_tuple(row)))

    def update(self, table: str, pk: Any, **changes: Any) -> None:
        t = self.schema[table]
        sets = ", ".join(f"{c} = ?" for c in changes)
        sql = f"UPDATE {t.name} SET {sets} WHERE {t.pk} = ?"
        self._track(table, pk, self.conn.execute(sql, (*changes.values(), pk)))
        if t.pk in changes:
            self._track(table, changes[t.pk], None)

    def delete(self, table: str, pk: Any) -> None:
        t = self.schema[table]
        sql = f"DELETE FROM {t.name} WHERE {t.pk} = ?"
        self._track(table, pk, self.conn.execute(sql, (pk,)))

    def _track(self, table: str, pk: Any, cur: sqlite3.Cursor | None) -> None:
        """Changes made through ``insert``/``update``/``delete`` are tracked by primary key;
        changes by raw SQL are noticed through ``total_changes`` and make the next snapshot
        re-read every table."""
        assert self.delta is not None
        self.delta.touch(table, pk)
        if cur is not None:
            self._own += max(cur.rowcount, 0)

    def _sync(self) -> Delta:
        assert self.delta is not None
        self.delta.refresh(self.conn, everything=self.conn.total_changes - self._base != self._own)
        self._own = self.conn.total_changes - self._base
        return self.delta

    def new_id(self, prefix: str) -> str:
        return self.ids.new(prefix)

    def now(self) -> str:
        return self.clock.now()

    def tick(self) -> str:
        return self.clock.tick()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A savepoint: everything inside commits together or not at all (nestable)."""
        name = f"sp{self._depth}"
        self._depth += 1
        marks = (self.ids.mark(), self.clock.mark())
        self.conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self.conn.execute(f"ROLLBACK TO {name}")
            self.conn.execute(f"RELEASE {name}")
            self.ids.restore(marks[0])
            self.clock.restore(marks[1])
            raise
        else:
            self.conn.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1

    # ---- state --------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The canonical state, cached until the next change: the template's digest plus
        the delta from it (per changed table the added or updated rows in full and the
        primary keys of removed ones). Treat the result as read-only."""
        changes = self.conn.total_changes
        if self._snap is not None and self._snap[0] == changes:
            return self._snap[1]
        assert self.template is not None
        names = {**self.ids.issued, **self.clock.issued}
        state = {"template": self.template.digest, "tables": self._sync().canonical(names)}
        self._snap = (changes, state)
        return state

    def diff(self) -> Diff:
        """Rows added, updated and removed per non-system table since the template."""
        return self._sync().diff()

    def close(self) -> None:
        self.conn.close()
