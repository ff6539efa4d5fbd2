"""Full-text search in worlds: an FTS5 index declared on table columns, ranked by BM25,
kept in step with the table, restored with the template, safe against any query text."""

from __future__ import annotations

import random

import pytest

from gymforge.world.clock import IdGen, SimClock
from gymforge.world.db import Template, WorldDB, rebuild
from gymforge.world.schema import Schema, table
from gymforge.world.search import match_query, search

SCHEMA = Schema(
    (
        table("docs", "id", "title", "body", fulltext=("title", "body")),
        table("notes", "id", "text"),
    )
)
ROWS = {
    "docs": [
        {"id": "D1", "title": "Borel annual report", "body": "Borel reported revenue growth."},
        {"id": "D2", "title": "Cendra news", "body": "Cendra names a new chief executive."},
        {"id": "D3", "title": "Markets", "body": "Borel and Cendra both reported results."},
        {"id": "D4", "title": "Weather", "body": "Rain in Leeds, sun in Perth."},
    ]
}


def world(template: Template | None = None) -> WorldDB:
    db = WorldDB()
    db.load(
        template or Template.build(SCHEMA, ROWS),
        IdGen(random.Random(0)),
        SimClock(0, random.Random(0)),
    )
    return db


def ids(db: WorldDB, text: str) -> list[str]:
    return [h.pk for h in search(db, "docs", text, column="body")]


def test_bm25_ranks_the_document_with_more_rare_query_words_first() -> None:
    db = world()
    assert ids(db, "Borel revenue") == ["D1", "D3"]
    hits = search(db, "docs", "Borel revenue", column="body")
    assert hits[0].score > hits[1].score
    assert hits[0].snippet == "[Borel] reported [revenue] growth."
    assert ids(db, "reports") == ["D1", "D3"]  # porter stemming: reports ~ reported


def test_query_text_is_never_fts_syntax() -> None:
    db = world()
    for text in ['"', "Borel -Cendra", "body:Borel", "Borel AND", "NEAR(", "*", "(("]:
        search(db, "docs", text, column="body")  # no sqlite3.OperationalError
    assert ids(db, "") == [] and ids(db, "  ... ") == []
    assert match_query('Borel "AND" body:x') == '"borel" OR "and" OR "body" OR "x"'


def test_index_follows_inserts_updates_and_deletes() -> None:
    db = world()
    db.insert("docs", {"id": "D5", "title": "Zephyr", "body": "Zephyr opens in Osaka."})
    assert ids(db, "Osaka") == ["D5"]
    assert db.diff().changed_tables == frozenset({"docs"})  # the index is no table of the diff
    db.update("docs", "D5", body="Zephyr opens in Graz.")
    assert ids(db, "Osaka") == [] and ids(db, "Graz") == ["D5"]
    db.delete("docs", "D5")
    assert ids(db, "Graz") == [] and not db.diff().changed_tables


def test_reset_restores_the_index_with_the_template() -> None:
    template = Template.build(SCHEMA, ROWS)
    db = world(template)
    assert ids(db, "Borel") == ["D1", "D3"]
    db.delete("docs", "D1")
    db.insert("docs", {"id": "D9", "title": "x", "body": "Borel again"})
    db.load(template, IdGen(random.Random(0)), SimClock(0, random.Random(0)))
    assert ids(db, "Borel") == ["D1", "D3"]  # a fresh connection: no stale FTS5 cache
    assert db.snapshot() == world(template).snapshot()


def test_declarations_are_checked() -> None:
    with pytest.raises(ValueError, match="not columns"):
        table("t", "id", "body", fulltext=("text",))
    with pytest.raises(ValueError, match="not a full-text column"):
        search(world(), "docs", "x", column="id")
    assert SCHEMA.fulltext and not Schema((table("t", "id"),)).fulltext


def test_both_build_paths_index_in_bulk_then_keep_the_index_by_triggers() -> None:
    """The template path (from the serialised empty schema) and the naive one (DDL) index the
    loaded rows with one FTS5 rebuild, and only then install the triggers."""
    naive = rebuild(SCHEMA, ROWS)
    for conn in (naive, world().conn):
        match = "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?"
        assert len(conn.execute(match, ("borel",)).fetchall()) == 2
        conn.execute("INSERT INTO docs (id, title, body) VALUES ('D7', 't', 'Borel once more')")
        assert len(conn.execute(match, ("borel",)).fetchall()) == 3
        triggers = conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        assert sorted(r[0] for r in triggers) == ["docs_fts_ad", "docs_fts_ai", "docs_fts_au"]
    assert not [s for s in SCHEMA.ddl() if "TRIGGER" in s]  # ddl() alone: no triggers yet
