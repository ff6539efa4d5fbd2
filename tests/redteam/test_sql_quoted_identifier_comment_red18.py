"""Attack: hide a clock read from the ``sql`` judge's lexical check inside an identifier.

``precheck`` blanks comments before it looks for a leading keyword and for clock reads
(``date()``, ``'now'``), so that a comment can neither hide the one nor split the other.
Its lexer knew SQLite's string literals and ``"quoted"`` identifiers, but not SQLite's two
other identifier quotes, ``[brackets]`` and ```backticks```: in ``SELECT 1 AS [--], date()``
it read ``--], date()`` as a line comment and blanked it, where SQLite reads a column alias
``--`` and then a clock read. The lexical check let the query through (with ``/*`` the rest
of the query, over several lines). Success for the attacker: a clock read, or a ``'now'``
literal, that ``precheck`` does not refuse.

Not a reward hole: at run time ``sql_clock`` refuses every date function given ``now`` or
no time value, so the verdict was ``nondeterministic`` all the same; but the lexical check,
which runs before the databases are built, no longer saw what its contract says it refuses,
and each such reply had the judge build both databases first. The defence: the lexer reads
``[...]`` and ```...``` as identifiers, as SQLite's tokenizer does (a bracket ends at the
first ``]``; a backtick is escaped by doubling it), so a comment marker inside one is kept.
"""

from __future__ import annotations

import pytest

from gymforge.envs.sql.family import FAMILIES, fixtures
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import QueryRefused, SqlLimits, precheck
from gymforge.verify.sql_verifier import SqlVerifier

HIDDEN_CLOCK_READS = [
    "SELECT 1 AS [--], date()",
    "SELECT 1 AS `--`, date()",
    "SELECT 1 AS [/*], date() /* */",
    "SELECT 1 AS `/*`,\n datetime()\n",
    "SELECT 1 AS [x--y], strftime('%s')",
    "SELECT 1 AS `a``--`, time()",
    "SELECT [--] FROM (SELECT 1 AS [--]) WHERE 'now' = 'now'",
]


@pytest.mark.parametrize("sql", HIDDEN_CLOCK_READS)
def test_a_comment_marker_in_a_quoted_identifier_hides_no_clock_read(sql: str) -> None:
    with pytest.raises(QueryRefused) as err:
        precheck(sql, SqlLimits())
    assert err.value.reason == "nondeterministic", sql


@pytest.mark.parametrize("sql", HIDDEN_CLOCK_READS[:4])
def test_the_verdict_is_a_refusal_before_any_database_is_built(sql: str) -> None:
    family = FAMILIES[0]
    truth = family.truth_of(family.task(1, 0))
    built: list[int] = []

    def databases() -> list:
        built.append(1)
        return fixtures(truth)

    v = SqlVerifier().verify(fenced(sql), truth.sql, databases, ordered=truth.ordered)
    assert not v.passed and v.reason == "nondeterministic", v.facts
    assert not built  # refused lexically: no database was built for it


def test_quoted_identifiers_still_run_and_still_end_where_sqlite_ends_them() -> None:
    limits = SqlLimits()
    for sql in (
        "SELECT [name], `city` FROM [customers]",
        "SELECT 1 AS [it's], 2 AS `it''s` -- date()",
        "SELECT 1 AS [a]]--] date()",  # the bracket ends at the first ]: the rest is a comment
    ):
        assert precheck(sql, limits) == sql
    family = FAMILIES[0]
    truth = family.truth_of(family.task(1, 0))
    answer = truth.sql.replace("t0.", "[t0].", 1)
    assert answer != truth.sql
    assert SqlVerifier().verify(fenced(answer), truth.sql, fixtures(truth)).passed
