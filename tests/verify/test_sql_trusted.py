"""The SQL judge's cheaper paths give what the paths they replace gave: the lexical blanking
of comments, and the in-memory databases (``sql_trusted``) a family runs its own gold
queries and near misses on, one connection each, against ``run_query`` on the judge's
files."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.envs.sql.family import FAMILIES, TABLES, SqlTruth, database
from gymforge.envs.sql.schema import build_database, fill_database, generate_rows
from gymforge.verify import sql_files
from gymforge.verify.sql import (
    _QUOTED_OR_COMMENT,
    QueryRefused,
    QueryResult,
    SqlFixture,
    SqlLimits,
    _blank_comment,
    precheck,
    run_query,
)
from gymforge.verify.sql_trusted import OVERRIDDEN, TrustedDatabase

_ONE_BY_ONE = re.compile(r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|--[^\n]*|/\*.*?(?:\*/|\Z)|.", re.S)


def blanked_one_by_one(sql: str) -> str:
    """The blanking as it was: every character a lexeme of its own unless a literal, a
    quoted identifier or a comment starts there."""
    return "".join(" " if m[0][:2] in ("--", "/*") else m[0] for m in _ONE_BY_ONE.finditer(sql))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="'\"-/*\n ;aSELCTnow()xé", max_size=60))
def test_comments_blanked_as_one_lexeme_at_a_time(sql: str) -> None:
    """The old lexer's text, wherever no ``[`` or backtick quotes an identifier (the old
    lexer did not know those quotes: ``test_sql_quoted_identifier_comment_red18.py``)."""
    assert _QUOTED_OR_COMMENT.sub(_blank_comment, sql) == blanked_one_by_one(sql)


_ONE_BY_ONE_QUOTES = re.compile(_QUOTED_OR_COMMENT.pattern + "|.", re.S)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="'\"`[]-/*\n ;aSELCTnow()xé", max_size=60))
def test_one_scan_blanks_as_one_lexeme_at_a_time_with_every_identifier_quote(sql: str) -> None:
    one_by_one = "".join(_blank_comment(m) for m in _ONE_BY_ONE_QUOTES.finditer(sql))
    assert _QUOTED_OR_COMMENT.sub(_blank_comment, sql) == one_by_one


def test_precheck_still_reads_through_comments_and_literals() -> None:
    limits = SqlLimits()
    for sql, reason in [
        ("/* SELECT */ DELETE FROM t", "not_a_select"),
        ("-- SELECT\nPRAGMA x", "not_a_select"),
        ("SELECT date(/* x */)", "nondeterministic"),
        ("SELECT 'now'", "nondeterministic"),
    ]:
        try:
            precheck(sql, limits)
        except QueryRefused as err:
            assert err.reason == reason, sql
        else:
            raise AssertionError(f"{sql!r} was not refused")
    assert precheck("SELECT '-- not a comment', \"/*\" FROM t;", limits).endswith('"/*" FROM t')


Outcome = tuple[str, Any]


def typed(result: QueryResult) -> tuple[tuple[str, ...], list[list[tuple[str, Any]]]]:
    """``result`` with every cell's type (``QueryResult`` equality holds ``1 == 1.0``)."""
    return result.columns, [[(type(c).__name__, c) for c in row] for row in result.rows]


def outcome(run: Callable[[], QueryResult]) -> Outcome:
    try:
        return ("ok", typed(run()))
    except QueryRefused as err:
        return ("refused", err.reason)


def judged(db: TrustedDatabase, tables: list[str]) -> SqlFixture:
    """The judge's fixture of ``db``'s database: a private file, opened by ``run_query``."""
    return SqlFixture.from_bytes(db.serialize(), tables)


def test_every_family_query_of_many_draws_gives_run_querys_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every query the families run while drawing (gold queries and near misses, kept or
    not, versions 1 and 2): the same columns, values and types, or the same refusal, as
    ``run_query`` on a file of the same database; and none calls a function that
    ``run_query`` overrides (so the trusted connections never install the overrides)."""
    files: dict[int, tuple[TrustedDatabase, SqlFixture]] = {}
    seen: list[str] = []
    query = TrustedDatabase.query

    def checked(db: TrustedDatabase, sql: str) -> QueryResult:
        if id(db) not in files:  # the database is kept alive with its file: ids stay unique
            files[id(db)] = (db, judged(db, sorted(db.tables)))
        fixture = files[id(db)][1]
        got = outcome(lambda: query(db, sql))
        assert got == outcome(lambda: run_query(fixture, sql)), sql
        assert OVERRIDDEN.search(sql) is None and db._helper is None, sql
        seen.append(sql)
        if got[0] == "refused":
            raise QueryRefused(got[1])
        return query(db, sql)

    written = len(list(sql_files._private_dir().iterdir()))
    with monkeypatch.context() as patch:
        patch.setattr(TrustedDatabase, "query", checked)
        for family in FAMILIES:
            for version in (1, 2):
                drawn = family.at_version(version)
                for level in sorted(drawn.levels):
                    for seed in range(20):
                        drawn.task(level, seed)
    assert len(seen) > 500 and len(set(seen)) > 300
    files.clear()
    assert len(list(sql_files._private_dir().iterdir())) == written  # judge's files: gone


def test_trusted_databases_answer_the_gold_queries_as_the_judges_files_do() -> None:
    """The judge's files are built from ``build_database``'s bytes (``database``); the
    family fills its connection with the same rows directly: the gold results agree."""
    written = len(list(sql_files._private_dir().iterdir()))
    for family in FAMILIES:
        for difficulty in sorted(family.levels):
            for seed in range(3):
                truth = SqlTruth.model_validate(family.task(difficulty, seed).truth)
                for data_seed in (truth.data_seed, truth.shadow_seed):
                    trusted = trusted_database(truth, data_seed)
                    assert len(list(sql_files._private_dir().iterdir())) == written
                    judge = database(truth, data_seed)  # a private file, as the judge reads
                    assert typed(trusted.query(truth.sql)) == typed(run_query(judge, truth.sql))
                    assert trusted.serialize() == judge_bytes(truth, data_seed)
                    del judge


def trusted_database(truth: SqlTruth, seed: int) -> TrustedDatabase:
    family = next(f for f in FAMILIES if f.schema.name == truth.schema_name)
    rows = generate_rows(family.schema, truth.distractors, truth.size, seed)
    return TrustedDatabase(
        lambda conn: fill_database(conn, family.schema, truth.distractors, rows),
        TABLES[truth.schema_name],
    )


def judge_bytes(truth: SqlTruth, seed: int) -> bytes:
    family = next(f for f in FAMILIES if f.schema.name == truth.schema_name)
    rows = generate_rows(family.schema, truth.distractors, truth.size, seed)
    return build_database(family.schema, truth.distractors, rows)


def shop_database() -> TrustedDatabase:
    truth = SqlTruth.model_validate(FAMILIES[0].task(1, 0).truth)
    return trusted_database(truth, truth.data_seed)


CALLS_OVERRIDDEN = [
    "SELECT date('2023-01-31', '+1 month'), strftime('%Y', '2022-03-04')",
    "SELECT julianday('2022-01-01'), time('12:00', '+90 minutes'), datetime(0, 'unixepoch')",
    "SELECT COUNT(*) FROM orders WHERE status LIKE 'ship%' OR status GLOB 'p*'",
    "SELECT instr('banana', 'an'), replace('aaa', 'a', 'bb'), trim('  x '), ltrim('xxy', 'x')",
    'SELECT "date"()',  # a clock read a lexical check misses: the override refuses it
    "SELECT date('n' || 'ow')",
    "SELECT datetime('2022-01-01', 'local' || 'time')",
    "SELECT length(replace(hex(zeroblob(40000)), '0', '00'))",
]


@pytest.mark.parametrize("sql", CALLS_OVERRIDDEN)
def test_a_query_naming_an_overridden_function_gets_run_querys_overrides(sql: str) -> None:
    db = shop_database()
    assert OVERRIDDEN.search(sql)
    assert outcome(lambda: db.query(sql)) == outcome(lambda: run_query(judged(db, ["orders"]), sql))
    assert db._helper is not None


def test_the_step_budget_stops_a_trusted_query_where_run_query_stops() -> None:
    """The same query, again and again on one connection, meets every budget as a fresh
    connection of ``run_query`` does: stopped under the same ones, answered under the
    others (the steps are counted per statement)."""
    db = shop_database()
    fixture = judged(db, ["orders"])
    sql = "SELECT COUNT(*) FROM orders AS a, orders AS b, orders AS c WHERE a.id + b.id > c.id"
    seen = set()
    for max_ops in range(1_000, 60_000, 1_500):
        limits = SqlLimits(max_ops=max_ops, op_chunk=100)
        tight = TrustedDatabase(lambda conn: conn.deserialize(db.serialize()), ["orders"], limits)
        for _ in range(2):
            got = outcome(lambda: tight.query(sql))  # noqa: B023
            assert got == outcome(lambda: run_query(fixture, sql, limits)), max_ops  # noqa: B023
            seen.add("ok" if got[0] == "ok" else got[1])
    assert seen == {"ok", "too_slow"}


def test_trusted_databases_are_read_only() -> None:
    db = shop_database()
    fixture = judged(db, TABLES["shop"])
    for sql in (
        "DELETE FROM orders",
        "SELECT * FROM sqlite_schema",
        "PRAGMA query_only=OFF",
        "SELECT load_extension('x')",
        "SELECT random()",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
        "SELECT 1; DELETE FROM orders",
    ):
        got = outcome(lambda: db.query(sql))  # noqa: B023
        assert got[0] == "refused" and got == outcome(lambda: run_query(fixture, sql)), sql  # noqa: B023
    assert (
        db.query("SELECT COUNT(*) FROM orders").rows
        == run_query(fixture, "SELECT COUNT(*) FROM orders").rows
    )


def test_an_answer_is_judged_by_run_query_on_files_never_on_a_trusted_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once the task is drawn, judging a reply opens no trusted database: the answer and
    the gold run through ``run_query`` on the task's databases saved as private files."""
    from gymforge.core import Reply, SyncEnvironment
    from gymforge.envs.sql import SqlEnv
    from gymforge.envs.sql.redteam import fenced
    from gymforge.verify import sql_verifier as judge

    family = FAMILIES[0]
    task_id = family.task_id(2, 4)
    truth = SqlTruth.model_validate(family.task(2, 4).truth)
    env = SyncEnvironment(SqlEnv())
    try:
        env.reset(task_id, 0)  # drawn here, on trusted databases
        uris: list[str] = []
        run = judge.run_query

        def spied(fixture: SqlFixture, sql: str, limits: SqlLimits | None = None) -> QueryResult:
            uris.append(fixture.uri)
            return run(fixture, sql, limits)

        def refused(*args: Any, **kwargs: Any) -> None:
            raise AssertionError("an answer reached a trusted database")

        with monkeypatch.context() as patch:
            patch.setattr(TrustedDatabase, "__init__", refused)
            patch.setattr(TrustedDatabase, "query", refused)
            patch.setattr(judge, "run_query", spied)
            result = env.step(Reply(text=fenced(truth.sql)))
    finally:
        env.close()
    assert result.info["success"]
    assert len(uris) == 4  # gold and answer, on the main and the shadow database
    assert all(u.startswith("file:/") and u.endswith("?mode=ro&immutable=1") for u in uris)
