"""The SQL environment declares its databases in the world schema language, and the
generated SQLite databases have exactly the declared types and keys."""

from __future__ import annotations

import sqlite3

import pytest

from gymforge.envs.sql.schema import (
    KIND_TYPES,
    SqlColumn,
    SqlSchema,
    build_database,
    column,
    generate_rows,
)
from gymforge.envs.sql.schemas import SCHEMAS
from gymforge.world.schema import Schema


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_generated_databases_match_the_declared_schema(name: str) -> None:
    schema = SCHEMAS[name]
    assert isinstance(schema, Schema) and not any(t.system for t in schema.tables)
    picks = [f"{t}.{c}" for t, c in schema.distractor_columns()]
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(build_database(schema, picks, generate_rows(schema, picks, 1, 3)))
        for t in schema.tables:
            info = [(r[1], r[2], r[5]) for r in conn.execute(f"PRAGMA table_info({t.name})")]
            assert info == [(c.name, c.type, int(c.name == t.pk)) for c in t.columns]
            keys = {(r[3], r[2]) for r in conn.execute(f"PRAGMA foreign_key_list({t.name})")}
            assert keys == {(c.name, c.references) for c in t.columns if c.kind == "fk"}
    finally:
        conn.close()


def test_a_column_cannot_contradict_its_kind() -> None:
    assert column("price", "num", "a price").type == KIND_TYPES["num"] == "REAL"
    with pytest.raises(ValueError, match="a num column is REAL"):
        SqlColumn("price", "TEXT", doc="a price", kind="num")
    with pytest.raises(ValueError, match="reference a table"):
        column("owner_id", "fk", "the owner")
    with pytest.raises(ValueError, match="reference a table"):
        column("city", "cat", "a city", references="cities")
    assert isinstance(SCHEMAS["shop"], SqlSchema)
