"""``stray_findings``: changes to a table outside the rows a task allows are collateral,
whether the row was added, updated (judged before and after) or removed."""

from __future__ import annotations

import random

from gymforge.world import IdGen, SimClock, Template, WorldDB, stray_findings
from gymforge.world.clock import epoch
from gymforge.world.schema import Schema, table

SCHEMA = Schema((table("items", "id", "owner", "qty:int"),))
ROWS = {
    "items": [
        {"id": "A", "owner": "me", "qty": 1},
        {"id": "B", "owner": "them", "qty": 2},
        {"id": "C", "owner": "them", "qty": 3},
    ]
}


def mine(row: object) -> bool:
    return isinstance(row, dict) and row.get("owner") == "me"


def fresh() -> WorldDB:
    db = WorldDB()
    db.load(
        Template.build(SCHEMA, ROWS),
        IdGen(random.Random(0)),
        SimClock(epoch("2024-01-01"), random.Random(0)),
    )
    return db


def test_allowed_changes_are_not_collateral() -> None:
    db = fresh()
    db.update("items", "A", qty=10)
    db.insert("items", {"id": "D", "owner": "me", "qty": 4})
    assert stray_findings(db.diff(), "items", mine) == []


def test_added_updated_and_removed_strays_are_named() -> None:
    db = fresh()
    db.insert("items", {"id": "E", "owner": "them", "qty": 5})
    db.update("items", "B", qty=20)
    db.delete("items", "C")
    (finding,) = stray_findings(db.diff(), "items", mine)
    assert finding.check == "collateral"
    assert all(pk in finding.message for pk in ("'B'", "'C'", "'E'"))


def test_an_update_is_judged_before_and_after() -> None:
    db = fresh()
    db.update("items", "B", owner="me")  # taking over someone else's row is not allowed
    assert len(stray_findings(db.diff(), "items", mine)) == 1
    assert stray_findings(fresh().diff(), "items", mine) == []
