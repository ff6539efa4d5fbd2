"""The sql verifier: result comparison, and every write or escape refused read-only."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pytest

from gymforge.core.errors import VerifierError
from gymforge.verify.sql import QueryRefused, SqlFixture, SqlLimits, compare_results, run_query
from gymforge.verify.sql_verifier import SqlVerifier

DDL = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, city TEXT, age INTEGER);
CREATE TABLE pets (id INTEGER PRIMARY KEY, owner_id INTEGER, kind TEXT, weight REAL);
"""
ROWS_A = (
    "INSERT INTO people VALUES (1,'Ana','Lyon',31),(2,'Ben','Porto',45),(3,'Cy','Lyon',27),"
    "(4,'Di','Basel',52);"
    "INSERT INTO pets VALUES (1,1,'cat',4.5),(2,1,'dog',20.0),(3,2,'cat',3.25),(4,4,'fish',0.1);"
)
ROWS_B = (
    "INSERT INTO people VALUES (1,'Eva','Lyon',38),(2,'Fil','Lyon',22),(3,'Gus','Porto',60);"
    "INSERT INTO pets VALUES (1,3,'cat',5.0),(2,2,'dog',12.0);"
)
GOLD = "SELECT name FROM people WHERE city = 'Lyon'"


def make(rows: str) -> SqlFixture:
    conn = sqlite3.connect(":memory:")
    conn.executescript(DDL + rows)
    fx = SqlFixture.from_connection(conn)
    conn.close()
    return fx


A, B = make(ROWS_A), make(ROWS_B)
V = SqlVerifier()


@pytest.mark.parametrize(
    ("reply", "gold", "ordered"),
    [
        (GOLD, GOLD, False),
        ("```sql\nselect name from people where city='Lyon';\n```", GOLD, False),
        ("SELECT p.name FROM people AS p WHERE p.city IN ('Lyon') ORDER BY p.age", GOLD, False),
        ("-- names\nSELECT name FROM people WHERE city LIKE 'lyon'", GOLD, False),
        ("WITH l AS (SELECT * FROM people WHERE city = 'Lyon') SELECT name FROM l", GOLD, False),
        ("<think>```sql\nSELECT 1\n```</think>\n```sql\n" + GOLD + "\n```", GOLD, False),
        (
            "SELECT kind, count(*) FROM pets GROUP BY kind",
            "SELECT COUNT(*) AS n, kind FROM pets GROUP BY kind",  # columns permuted
            False,
        ),
        ("SELECT avg(weight) FROM pets", "SELECT sum(weight) / count(*) FROM pets", False),
        ("SELECT count(*) FROM pets", "SELECT count(*) * 1.0 FROM pets", False),  # 4 == 4.0
        (
            "SELECT name FROM (SELECT name, row_number() OVER (ORDER BY age) AS r "
            "FROM people WHERE city = 'Lyon')",
            GOLD,
            False,
        ),
        (
            "SELECT name FROM people ORDER BY age DESC",
            "SELECT name FROM people ORDER BY age DESC",
            True,
        ),
        (
            "SELECT DISTINCT pe.name FROM people pe JOIN pets pt ON pt.owner_id = pe.id "
            "WHERE pt.kind = 'cat'",
            "SELECT name FROM people WHERE id IN (SELECT owner_id FROM pets WHERE kind = 'cat')",
            False,
        ),
    ],
)
def test_accept_table(reply: str, gold: str, ordered: bool) -> None:
    v = V.verify(reply, gold, [A, B], ordered=ordered)
    assert v.passed, v
    assert v.facts["fixtures"] == 2 and v.verifier.startswith("sql@")


@pytest.mark.parametrize(
    ("reply", "gold", "ordered", "reason"),
    [
        ("SELECT name FROM people", GOLD, False, "wrong_result"),
        ("SELECT name, age FROM people WHERE city = 'Lyon'", GOLD, False, "wrong_columns"),
        ("SELECT name FROM people WHERE city = 'Porto'", GOLD, False, "wrong_result"),
        (
            "SELECT name FROM people ORDER BY age",
            "SELECT name FROM people ORDER BY age DESC",
            True,
            "wrong_result",
        ),
        (
            "SELECT DISTINCT pe.name FROM people pe JOIN pets pt ON pt.owner_id = pe.id",
            "SELECT pe.name FROM people pe JOIN pets pt ON pt.owner_id = pe.id",
            False,
            "wrong_result",  # a multiset: duplicates count
        ),
        ("SELECT nme FROM people", GOLD, False, "sql_error"),
        ("The answer is Ana and Cy.", GOLD, False, "not_a_select"),
        ("", GOLD, False, "no_answer"),
        ("```sql\nSELECT 1\n```\nor this one", GOLD, False, "text_after_answer"),
        ("```sql\nSELECT 1\n```\n```sql\n" + GOLD + "\n```", GOLD, False, "hedge"),
    ],
)
def test_reject_table(reply: str, gold: str, ordered: bool, reason: str) -> None:
    v = V.verify(reply, gold, [A, B], ordered=ordered)
    assert not v.passed and v.reason == v.facts["reason"] == reason, v


def test_order_facts_and_column_names() -> None:
    gold = "SELECT name FROM people ORDER BY name"
    v = V.verify("SELECT name FROM people ORDER BY name DESC", gold, [A], ordered=True)
    assert v.facts["detail"] == "right rows in the wrong order"
    assert V.verify("SELECT name AS who FROM people", "SELECT name FROM people", [A]).passed
    named = V.verify(
        "SELECT name AS who FROM people", "SELECT name FROM people", [A], match_columns=True
    )
    assert named.reason == "wrong_columns"


def test_hard_coded_results_fail_on_the_second_database() -> None:
    literal = "SELECT 'Ana' UNION ALL SELECT 'Cy'"
    assert V.verify(literal, GOLD, [A]).passed  # right on the one database it was read from
    v = V.verify(literal, GOLD, [A, B])
    assert not v.passed and v.facts["failed_fixture"] == 1


WRITES = [
    ("INSERT INTO people VALUES (9, 'X', 'Y', 1)", "not_a_select"),
    ("UPDATE people SET age = 0", "not_a_select"),
    ("DELETE FROM people", "not_a_select"),
    ("DROP TABLE people", "not_a_select"),
    ("CREATE TABLE t (x)", "not_a_select"),
    ("ALTER TABLE people ADD COLUMN z", "not_a_select"),
    ("REPLACE INTO people VALUES (1, 'X', 'Y', 1)", "not_a_select"),
    ("PRAGMA query_only = OFF", "not_a_select"),
    ("PRAGMA writable_schema = 1", "not_a_select"),
    ("ATTACH DATABASE ':memory:' AS other", "not_a_select"),
    ("VACUUM", "not_a_select"),
    ("BEGIN; DELETE FROM people; COMMIT", "not_a_select"),
    ("SELECT 1; DELETE FROM people", "multiple_statements"),
    (GOLD + "; DROP TABLE people", "multiple_statements"),
    ("WITH x AS (SELECT 1) DELETE FROM people", "refused"),
    ("WITH x AS (SELECT 1) INSERT INTO people SELECT 9, 'a', 'b', 1", "refused"),
    ("WITH x AS (SELECT 1) UPDATE people SET age = 0", "refused"),
    ("SELECT load_extension('/tmp/x.so')", "refused"),
    ("SELECT * FROM pragma_table_info('people')", "refused"),
    ("SELECT * FROM sqlite_master", "refused"),
    ("SELECT random()", "refused"),
    ("SELECT hex(randomblob(8))", "refused"),
    ("SELECT zeroblob(1000000000)", "refused"),
    ("SELECT printf('%.*c', 1000000000, 'x')", "refused"),
    ("SELECT current_timestamp", "refused"),
    ("SELECT date('now')", "nondeterministic"),
    ("SELECT date()", "nondeterministic"),
    ("SELECT strftime('%Y')", "nondeterministic"),
    ("SELECT julianday(/* hidden */)", "nondeterministic"),
    ("/* SELECT */ DELETE FROM people", "not_a_select"),
    ("SELECT * FROM people WHERE name LIKE '" + "%a" * 200 + "'", "sql_error"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r", "refused"),
    ("SELECT count(*) FROM " + ", ".join(f"pets p{i}" for i in range(12)), "too_slow"),
    ("SELECT length(group_concat(a.name || b.name)) FROM people a, people b", None),
]


@pytest.mark.parametrize(("sql", "reason"), WRITES, ids=[w[0][:40] for w in WRITES])
def test_writes_pragmas_escapes_and_bombs_are_refused(sql: str, reason: str | None) -> None:
    v = V.verify(sql, GOLD, [A])
    assert not v.passed
    if reason is not None:
        assert v.reason == reason, v
    # the fixture is untouched: the gold query still sees the same rows
    assert run_query(A, "SELECT count(*) FROM people").rows == ((4,),)


@pytest.mark.perf
@pytest.mark.parametrize(("sql", "reason"), WRITES, ids=[w[0][:40] for w in WRITES])
def test_bombs_are_refused_quickly(sql: str, reason: str | None) -> None:
    t0 = time.perf_counter()
    V.verify(sql, GOLD, [A])
    assert time.perf_counter() - t0 < 1.5


def test_file_fixture_opens_read_only_and_stays_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "fixture.db"
    conn = sqlite3.connect(path)
    conn.executescript(DDL + ROWS_A)
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    fx = SqlFixture.from_path(path)
    assert V.verify(GOLD, GOLD, [fx]).passed
    for sql, _ in WRITES[:20]:
        assert not V.verify(sql, GOLD, [fx]).passed
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fixture.db"]  # no journal, no WAL


def test_row_cap_and_limits() -> None:
    limits = SqlLimits(max_rows=3)
    with pytest.raises(QueryRefused) as err:
        run_query(A, "SELECT * FROM people", limits)
    assert err.value.reason == "too_many_rows"
    with pytest.raises(QueryRefused) as err:
        run_query(A, "SELECT 1", SqlLimits(max_sql_chars=5, max_ops=1))
    assert err.value.reason == "too_long"


def test_gold_failure_is_a_verifier_error_and_fixtures_are_lazy() -> None:
    with pytest.raises(VerifierError):
        V.verify("SELECT 1", "SELECT nope FROM nowhere", [A])
    calls: list[int] = []

    def fixtures() -> list[SqlFixture]:
        calls.append(1)
        return [A]

    assert V.verify("I don't know", GOLD, fixtures).reason == "not_a_select"
    assert V.verify("DELETE FROM people", GOLD, fixtures).reason == "not_a_select"
    assert calls == []
    assert V.verify(GOLD, GOLD, fixtures).passed and calls == [1]


def test_compare_results_permutations_are_bounded_and_exact() -> None:
    from gymforge.verify.sql import QueryResult

    want = QueryResult(("a", "b"), ((1, "x"), (2, "y")))
    assert compare_results(QueryResult(("b", "a"), (("x", 1), ("y", 2))), want) is None
    assert compare_results(QueryResult(("b", "a"), (("y", 1), ("x", 2))), want) is not None
    assert compare_results(QueryResult(("b", "a"), (("x", 1), ("y", 2))), want, column_order=True)
