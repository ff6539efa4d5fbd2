"""A question whose filter decides nothing on the task's databases pays a query that ignores it.

The family draws a question until its gold result on the shown database differs from the
shadow's; nothing checked that the question's filter mattered. "Products that appear in
order items whose quantity is at most 7" over order items whose quantities are almost all
at most 7, or "the lowest duration of the flights from airports with at least 2 terminals"
where the shortest flight leaves from such an airport anyway: the gold query without its
``WHERE`` gave the gold result on both databases, and was paid. So was the filter read
with the wrong strictness (``>`` for "at least"), in the question or in its ``NOT IN``
subquery, and a list or count without ``DISTINCT`` where a parent is reached through
several children. Measured over 360 tasks (seeds 20000-20039, every family and level),
counting only misreadings that are wrong on some other database: dropping the filter was
paid on 4 of 170 tasks, the wrong strictness on 5 of 57, no ``DISTINCT`` on 2 of 63.
"""

from __future__ import annotations

import re

import pytest

from gymforge.envs.sql import FAMILIES
from gymforge.envs.sql.family import SqlTruth, _database, fixtures
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import QueryRefused, compare_results, run_query
from gymforge.verify.sql_verifier import SqlVerifier

VERIFIER = SqlVerifier()


def _misreadings(truth: SqlTruth) -> dict[str, str]:
    sql, out = truth.sql, {}
    if truth.kind in ("list", "count", "agg_num"):
        out["no_filter"] = re.sub(r" WHERE .*?(?= ORDER BY|$)", "", sql)
        out["no_distinct"] = sql.replace("DISTINCT t0.id", "t0.id").replace("DISTINCT ", "")
    if truth.kind == "not_in":
        out["no_filter"] = re.sub(r" WHERE (?!t0\.id NOT IN)[^)]*\)", ")", sql)
    flipped = re.sub(r" (>=|<=) (?=-?\d)", lambda m: f" {m[1][0]} ", sql)
    if truth.kind in ("list", "count", "agg_num", "not_in") and flipped != sql:
        out["wrong_strictness"] = flipped
    return {name: q for name, q in out.items() if q != sql}


def _wrong_somewhere(truth: SqlTruth, sql: str) -> bool:
    """Whether ``sql`` differs from the gold on some database of the task's kind."""
    for seed in range(1, 9):
        db = _database(truth.schema_name, truth.distractors, truth.size, seed)
        try:
            got = run_query(db, sql)
        except QueryRefused:
            return True
        if compare_results(got, run_query(db, truth.sql), ordered=truth.ordered) is not None:
            return True
    return False


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_query_misreading_the_filter_is_not_paid(family) -> None:
    paid = []
    for level in sorted(family.levels):
        for seed in range(20000, 20014):
            truth = SqlTruth.model_validate(family.task(level, seed).truth)
            for name, sql in _misreadings(truth).items():
                reply = fenced(sql)
                verdict = VERIFIER.verify(reply, truth.sql, fixtures(truth), ordered=truth.ordered)
                if verdict.passed and _wrong_somewhere(truth, sql):
                    paid.append((level, seed, name, sql))
    assert not paid


def _unscoped(truth: SqlTruth) -> str | None:
    """An ``above_avg`` question's average taken over the whole table, not its scope."""
    if truth.kind != "above_avg":
        return None
    sql = re.sub(
        r"\(SELECT AVG\(s0\.(\w+)\) FROM (\w+) AS s0 WHERE [^)]*\)",
        r"(SELECT AVG(\1) FROM \2)",
        truth.sql,
    )
    return None if sql == truth.sql else sql


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_an_average_over_the_wrong_scope_is_not_paid(family) -> None:
    """ "Above the average price of the products whose category is 'toys'" read as the
    average of all products: paid on 2 of 7 tasks where it is wrong (seeds 40000-40039)."""
    paid = []
    for level in sorted(family.levels):
        for seed in range(40000, 40040):
            truth = SqlTruth.model_validate(family.task(level, seed).truth)
            sql = _unscoped(truth)
            if sql is None:
                continue
            verdict = VERIFIER.verify(fenced(sql), truth.sql, fixtures(truth))
            if verdict.passed and _wrong_somewhere(truth, sql):
                paid.append((level, seed, sql))
    assert not paid


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_at_least_k_children_read_as_more_than_k_is_not_paid(family) -> None:
    """ "Customers with at least 3 orders" read as ``HAVING COUNT(*) > 3``: paid on 1 of 10
    tasks where it is wrong (seeds 60000-60039)."""
    paid = []
    for level in sorted(family.levels):
        for seed in range(60000, 60040):
            truth = SqlTruth.model_validate(family.task(level, seed).truth)
            if truth.kind != "having":
                continue
            sql = truth.sql.replace("HAVING COUNT(*) >=", "HAVING COUNT(*) >")
            verdict = VERIFIER.verify(fenced(sql), truth.sql, fixtures(truth))
            if verdict.passed and _wrong_somewhere(truth, sql):
                paid.append((level, seed, sql))
    assert not paid
