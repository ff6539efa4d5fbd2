"""World state: template reset, snapshot normalisation, diffs, rollback, reset isolation."""

from __future__ import annotations

import asyncio
import random

import pytest
from notes_world import SCHEMA, NotesEnv

from gymforge.core import SyncEnvironment, ToolCall
from gymforge.core.seeding import fingerprint
from gymforge.world import IdGen, SimClock, Template, TemplateCache, WorldDB, rebuild
from gymforge.world.clock import epoch, iso

ROWS = {"tags": [{"id": "TG-0", "label": "red"}, {"id": "TG-1", "label": "blue"}]}


def fresh_db(seed: int = 0) -> WorldDB:
    db = WorldDB()
    db.load(
        Template.build(SCHEMA, ROWS),
        IdGen(random.Random(seed)),
        SimClock(epoch("2024-01-01"), random.Random(seed)),
    )
    return db


def add(db: WorldDB, text: str) -> str:
    note = db.new_id("NT")
    db.insert("notes", {"id": note, "tag_id": "TG-0", "text": text, "created_at": db.tick()})
    return note


def test_template_restore_matches_naive_rebuild() -> None:
    db = fresh_db()
    naive = rebuild(SCHEMA, ROWS)
    assert db.all("SELECT * FROM tags ORDER BY id") == [
        dict(zip(("id", "label"), r, strict=True))
        for r in naive.execute("SELECT * FROM tags ORDER BY id")
    ]
    add(db, "x")
    db.load(db.template, IdGen(random.Random(0)), SimClock(0, random.Random(0)))  # reset
    assert db.scalar("SELECT COUNT(*) FROM notes") == 0
    assert db.snapshot() == {"template": db.template.digest, "tables": {}}
    assert db.diff().changed_tables == frozenset()


def test_template_cache_is_a_bounded_lru() -> None:
    cache = TemplateCache(maxsize=2)
    built: list[str] = []

    def build(key: str) -> Template:
        built.append(key)
        return Template.build(SCHEMA, ROWS)

    for key in ("a", "b", "a", "c", "b"):
        cache.get(key, lambda key=key: build(key))
    assert built == ["a", "b", "c", "b"]  # "b" was evicted by "c" ("a" had been used since)
    assert len(cache) == 2


def test_fingerprint_normalises_generated_ids_and_timestamps() -> None:
    a, b = fresh_db(seed=1), fresh_db(seed=2)
    ids_a = [add(a, "first"), add(a, "second")]
    ids_b = [add(b, "first"), add(b, "second")]
    assert ids_a != ids_b  # raw ids and times differ between seeds...
    assert a.all("SELECT created_at FROM notes") != b.all("SELECT created_at FROM notes")
    assert fingerprint(a.snapshot()) == fingerprint(b.snapshot())  # ...the canonical state not
    rows = a.snapshot()["tables"]["notes"]["rows"]
    assert [r[0] for r in rows] == ["NT#1", "NT#2"]  # creation order
    assert [r[3] for r in rows] == ["T+1", "T+2"]
    c = fresh_db(seed=1)
    add(c, "second"), add(c, "first")  # same rows, other creation order: another state
    assert fingerprint(c.snapshot()) != fingerprint(a.snapshot())


def test_snapshot_is_a_delta_and_cached_until_a_change() -> None:
    db = fresh_db()
    first = db.snapshot()
    assert db.snapshot() is first
    db.update("tags", "TG-1", label="green")
    second = db.snapshot()
    assert second is not first
    assert second["tables"] == {"tags": {"columns": ["id", "label"], "rows": [["TG-1", "green"]]}}
    db.update("tags", "TG-1", label="blue")  # back to the template's value: no delta
    assert db.snapshot()["tables"] == {}
    db.delete("tags", "TG-0")
    assert db.snapshot()["tables"]["tags"]["removed"] == ["TG-0"]


def test_raw_sql_writes_are_noticed() -> None:
    db = fresh_db()
    db.conn.execute("UPDATE tags SET label = 'raw' WHERE id = 'TG-0'")
    assert db.snapshot()["tables"]["tags"]["rows"] == [["TG-0", "raw"]]
    d = db.diff()
    assert d.changed_tables == {"tags"}
    assert d["tags"].updated == (({"id": "TG-0", "label": "red"}, {"id": "TG-0", "label": "raw"}),)


def test_diff_lists_added_updated_removed_per_table() -> None:
    db = fresh_db()
    note = add(db, "hello")
    db.update("tags", "TG-1", label="green")
    db.delete("tags", "TG-0")
    d = db.diff()
    assert d.changed_tables == {"notes", "tags"}
    assert [r["id"] for r in d["notes"].added] == [note]
    assert d["tags"].updated[0][1]["label"] == "green"
    assert d["tags"].removed == ({"id": "TG-0", "label": "red"},)
    assert d.as_json() == {
        "notes": {"added": 1, "updated": 0, "removed": 0},
        "tags": {"added": 0, "updated": 1, "removed": 1},
    }


def test_rolled_back_writes_leave_no_rows_ids_or_time() -> None:
    db = fresh_db()
    try:
        with db.transaction():
            add(db, "doomed")
            raise ValueError("boom")
    except ValueError:
        pass
    assert db.scalar("SELECT COUNT(*) FROM notes") == 0
    assert db.diff().changed_tables == frozenset()
    add(db, "kept")
    rows = db.snapshot()["tables"]["notes"]["rows"]
    assert rows[0][0] == "NT#1" and rows[0][3] == "T+1"


def test_clock_is_simulated_and_iso_round_trips() -> None:
    clock = SimClock(epoch("2024-03-05T10:00:00Z"), random.Random(3))
    assert clock.now() == "2024-03-05T10:00:00Z"
    t1, t2 = clock.tick(), clock.tick()
    assert "2024-03-05T10:00:00Z" < t1 < t2 < "2024-03-05T10:04:00Z"
    assert iso(epoch(t2)) == t2


def test_reset_isolation_on_a_reused_instance() -> None:
    task = NotesEnv.tasks.sample(1, 0, "train")[0]
    other = NotesEnv.tasks.sample(2, 9, "train")[1]

    def run(env: SyncEnvironment, task_id: str) -> list[str]:
        prints = [fingerprint(env.snapshot())] if env.reset(task_id, 5) else []
        for action in env.env.oracle_plan(env.env.task)[:-1]:
            env.step(action)
            prints.append(fingerprint(env.snapshot()))
        return prints

    fresh = SyncEnvironment(NotesEnv())
    want = run(fresh, task)
    reused = SyncEnvironment(NotesEnv())
    run(reused, other)
    reused.step(ToolCall(name="add_note", arguments={"text": "dirt", "idempotency_key": "zz"}))
    assert run(reused, task) == want
    fresh.close(), reused.close()


@pytest.mark.perf
def test_warm_reset_is_fast() -> None:
    env = NotesEnv()
    task = NotesEnv.tasks.sample(1, 0, "train")[0]

    async def go() -> None:
        await env.reset(task, 0)
        import time

        t0 = time.perf_counter()
        for i in range(200):
            await env.reset(task, i)
        assert (time.perf_counter() - t0) / 200 < 0.005  # generous: ~0.1 ms on a quiet machine

    asyncio.run(go())
