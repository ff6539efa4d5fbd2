"""The schema language: the compact and the documented DDL build the same tables in SQLite."""

from __future__ import annotations

import sqlite3

import pytest

from gymforge.world.schema import IDEMPOTENCY, Column, Schema, table

SCHEMA = Schema(
    (
        table("teams", Column("id", doc="team id"), Column("name", nullable=False, doc="name")),
        table(
            "players",
            Column("id", doc="player id"),
            Column("team_id", references="teams", doc="the player's team"),
            Column("rating", "REAL", doc="Elo rating"),
            "nick",
        ),
    )
)


def columns(ddl: list[str] | str) -> dict[str, list[tuple[str, str, int, int]]]:
    conn = sqlite3.connect(":memory:")
    try:
        if isinstance(ddl, str):
            conn.executescript(ddl)
        else:
            for stmt in ddl:
                conn.execute(stmt)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            n: [(r[1], r[2], r[3], r[5]) for r in conn.execute(f"PRAGMA table_info({n})")]
            for n in names
        }
    finally:
        conn.close()


def test_documented_ddl_declares_what_the_compact_ddl_does() -> None:
    documented = SCHEMA.documented_ddl()
    assert "  team_id TEXT REFERENCES teams(id),  -- the player's team" in documented
    assert "  name TEXT NOT NULL  -- name\n);" in documented
    assert "  acked INTEGER\n);" in documented  # no comment without a doc
    assert columns(documented) == columns(SCHEMA.ddl())
    assert columns(documented)["players"][2] == ("rating", "REAL", 0, 0)
    for form in (documented, ";".join(SCHEMA.ddl())):
        conn = sqlite3.connect(":memory:")
        conn.executescript(form)
        keys = [r[2:4] for r in conn.execute("PRAGMA foreign_key_list(players)")]
        conn.close()
        assert keys == [("teams", "team_id")]


def test_visible_picks_columns_and_system_tables_are_optional() -> None:
    assert SCHEMA.tables[-1] is IDEMPOTENCY
    bare = Schema(SCHEMA.tables[:2], system_tables=())
    assert [t.name for t in bare.tables] == ["teams", "players"]
    slim = bare.documented_ddl(lambda t: [c for c in t.columns if c.name != "nick"])
    assert "nick" not in slim and "rating REAL" in slim
    assert bare["players"].column("rating").type == "REAL"
    with pytest.raises(KeyError, match="no column"):
        bare["players"].column("ratings")
