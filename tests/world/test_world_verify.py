"""effect_findings: a table the task expects rows added to (or updated in) is still checked
for every other kind of change to it."""

from __future__ import annotations

from gymforge.world import Diff, Expect, TableDiff, effect_findings

NEW = {"id": "CT-9", "email": "a@x.com"}
OLD = {"id": "CT-1", "title": "CFO"}


def checks(diff: Diff, expect: Expect) -> set[str]:
    return {f.check for f in effect_findings(diff, expect)}


def test_an_unexpected_update_to_a_table_with_expected_additions_is_collateral() -> None:
    expect = Expect(added={"contacts": [{"email": "a@x.com"}]})
    clean = Diff({"contacts": TableDiff(added=(NEW,))})
    assert checks(clean, expect) == set()
    tidied = Diff({"contacts": TableDiff(added=(NEW,), updated=((OLD, {**OLD, "title": "?"}),))})
    assert "collateral" in checks(tidied, expect)


def test_an_unexpected_addition_to_a_table_with_expected_updates_is_a_wrong_row() -> None:
    expect = Expect(updated={"contacts": {"CT-1": {"title": "CTO"}}})
    clean = Diff({"contacts": TableDiff(updated=((OLD, {**OLD, "title": "CTO"}),))})
    assert checks(clean, expect) == set()
    extra = Diff({"contacts": TableDiff(added=(NEW,), updated=((OLD, {**OLD, "title": "CTO"}),))})
    assert "wrong_rows" in checks(extra, expect)


def test_touched_tables_are_not_checked_row_by_row() -> None:
    expect = Expect(touched=frozenset({"audit_log"}))
    diff = Diff({"audit_log": TableDiff(added=({"id": "AU-1"},), updated=((OLD, OLD),))})
    assert checks(diff, expect) == set()
