"""The delta between a world and its template: diffs for verifiers, canonical snapshots.

``Delta`` keeps, per table, the rows whose current value differs from the template's
(``None`` for a removed row), updated incrementally from the primary keys that writes
touched, so a snapshot after each step costs the size of the change, not of the world.

Canonical form: ids generated during the episode become ``<prefix>#<n>`` and issued
timestamps ``T+<n>`` (creation order; see ``gymforge.world.clock``), rows are sorted by
primary key, and each table is ``{"columns": [...], "rows": [[...], ...]}`` plus
``"removed": [pk, ...]`` when rows were deleted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gymforge.world.schema import Schema, Table

if TYPE_CHECKING:
    from gymforge.world.db import Template

Row = dict[str, Any]
Raw = tuple[Any, ...]
_CHUNK = 500


@dataclass(frozen=True)
class TableDiff:
    added: tuple[Row, ...] = ()
    updated: tuple[tuple[Row, Row], ...] = ()
    removed: tuple[Row, ...] = ()
    pk: str = "id"

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def counts(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "removed": len(self.removed),
        }


@dataclass(frozen=True)
class Diff:
    """The changed (non-system) tables only."""

    tables: Mapping[str, TableDiff] = field(default_factory=dict)

    @property
    def changed_tables(self) -> frozenset[str]:
        return frozenset(self.tables)

    def __getitem__(self, name: str) -> TableDiff:
        return self.tables.get(name, TableDiff())

    def as_json(self) -> dict[str, dict[str, int]]:
        return {name: d.counts() for name, d in sorted(self.tables.items())}


def rows_by_pk(conn: sqlite3.Connection, t: Table) -> dict[Any, Raw]:
    cols = t.column_names
    i = cols.index(t.pk)
    cur = conn.execute(f"SELECT {', '.join(cols)} FROM {t.name} ORDER BY {t.pk}")
    return {r[i]: r for r in cur.fetchall()}


class Delta:
    """Rows that differ from the template, per table (``None``: removed)."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self.schema: Schema = template.schema
        self.rows: dict[str, dict[Any, Raw | None]] = {}
        self.pending: dict[str, set[Any]] = {}
        self._memo: dict[Raw, list[Any]] = {}

    def touch(self, table: str, pk: Any) -> None:
        self.pending.setdefault(table, set()).add(pk)

    def refresh(self, conn: sqlite3.Connection, everything: bool = False) -> None:
        """Re-read the touched rows (every row of every table with ``everything``, after
        writes this object was not told about)."""
        if everything:
            for t in self.schema.tables:
                everyone = rows_by_pk(conn, t)
                before = self.template.rows(t.name)
                changed: dict[Any, Raw | None] = {
                    pk: r for pk, r in everyone.items() if before.get(pk) != r
                }
                changed.update({pk: None for pk in before if pk not in everyone})
                self.rows[t.name] = changed
            self.pending = {}
            return
        for name, pks in self.pending.items():
            t = self.schema[name]
            before = self.template.rows(name)
            keys = list(pks)
            current: dict[Any, Raw] = {}
            for i in range(0, len(keys), _CHUNK):
                part = keys[i : i + _CHUNK]
                sql = (
                    f"SELECT {', '.join(t.column_names)} FROM {name} "
                    f"WHERE {t.pk} IN ({', '.join('?' * len(part))})"
                )
                j = t.column_names.index(t.pk)
                current.update({r[j]: r for r in conn.execute(sql, part).fetchall()})
            table = self.rows.setdefault(name, {})
            for pk in keys:
                now, then = current.get(pk), before.get(pk)
                if now == then:
                    table.pop(pk, None)
                else:
                    table[pk] = now
        self.pending = {}

    def canonical(self, names: Mapping[str, str]) -> dict[str, Any]:
        """The changed tables in canonical form (a row's form is memoised: an id's or a
        time's label never changes once issued)."""
        out: dict[str, Any] = {}
        memo = self._memo
        for t in self.schema.tables:
            table = self.rows.get(t.name)
            if not table:
                continue
            i = t.column_names.index(t.pk)
            canon, removed = [], []
            for pk, r in table.items():
                if r is None:
                    removed.append(names.get(pk, pk))
                    continue
                c = memo.get(r)
                if c is None:
                    c = memo[r] = [names.get(v, v) if isinstance(v, str) else v for v in r]
                canon.append(c)
            body: dict[str, Any] = {
                "columns": list(t.column_names),
                "rows": sorted(canon, key=lambda row: str(row[i])),
            }
            if removed:
                body["removed"] = sorted(removed, key=str)
            out[t.name] = body
        return out

    def diff(self) -> Diff:
        """Rows added, updated and removed per non-system table."""
        out: dict[str, TableDiff] = {}
        for t in self.schema.tables:
            table = self.rows.get(t.name)
            if t.system or not table:
                continue
            before = self.template.rows(t.name)
            cols = t.column_names
            added, updated, removed = [], [], []
            for pk, r in sorted(table.items(), key=lambda kv: str(kv[0])):
                if r is None:
                    removed.append(dict(zip(cols, before[pk], strict=True)))
                elif pk in before:
                    updated.append(
                        (dict(zip(cols, before[pk], strict=True)), dict(zip(cols, r, strict=True)))
                    )
                else:
                    added.append(dict(zip(cols, r, strict=True)))
            out[t.name] = TableDiff(tuple(added), tuple(updated), tuple(removed), t.pk)
        return Diff(out)
