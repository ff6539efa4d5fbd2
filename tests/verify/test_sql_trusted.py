"""The SQL judge's cheaper paths give what the paths they replace gave: the lexical blanking
of comments, and the in-memory databases a family runs its own gold queries on."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.envs.sql.family import FAMILIES, TABLES, SqlFamily, database
from gymforge.envs.sql.schema import build_database, generate_rows
from gymforge.verify import sql_files
from gymforge.verify.sql import (
    _QUOTED_OR_COMMENT,
    QueryRefused,
    SqlFixture,
    SqlLimits,
    _blank_comment,
    precheck,
    run_query,
)

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


def test_trusted_fixtures_answer_the_gold_queries_as_the_judges_files_do() -> None:
    written = len(list(sql_files._private_dir().iterdir()))
    for family in FAMILIES:
        for difficulty in sorted(family.levels):
            for seed in range(3):
                truth = family.truth_of(family.task(difficulty, seed))
                for data_seed in (truth.data_seed, truth.shadow_seed):
                    schema = family.schema
                    rows = generate_rows(schema, truth.distractors, truth.size, data_seed)
                    data = build_database(schema, truth.distractors, rows)
                    trusted = SqlFixture.trusted_in_memory(data, TABLES[schema.name])
                    assert len(list(sql_files._private_dir().iterdir())) == written
                    judged = database(truth, data_seed)  # a private file, as the judge reads
                    assert run_query(trusted, truth.sql) == run_query(judged, truth.sql)
                    del judged


def test_trusted_fixtures_are_read_only() -> None:
    family: SqlFamily = FAMILIES[0]
    truth = family.truth_of(family.task(1, 0))
    rows = generate_rows(family.schema, truth.distractors, truth.size, truth.data_seed)
    data = build_database(family.schema, truth.distractors, rows)
    trusted = SqlFixture.trusted_in_memory(data, TABLES[family.schema.name])
    for sql in ("DELETE FROM orders", "SELECT * FROM sqlite_schema"):
        try:
            run_query(trusted, sql)
        except QueryRefused as err:
            assert err.reason in ("not_a_select", "refused")
        else:
            raise AssertionError(sql)
