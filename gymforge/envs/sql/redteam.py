"""SQL-specific red-team cases: answers that must never be judged a success.

Each craft reads the task's hidden truth (the gold query and the database seeds) and
returns the whole reply, or None when the attack cannot be built for this task (or would
by accident be a correct answer on every database: then it is not counted).

- write attempts: a ``DELETE`` before the gold query, a CTE that deletes, a ``PRAGMA``;
- escapes: ``ATTACH``, ``load_extension``, reading ``sqlite_master``;
- bombs: a recursive CTE without end, a tenfold cross join;
- hard-coding: the gold result on the shown database, typed out as literals (the shadow
  database catches it);
- near misses: the whole table, the reversed order on ordered tasks, a distractor column
  read in place of its real twin;
- format games: the gold query only inside ``<think>``, a wrong query then the gold one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gymforge.envs.sql.family import SqlTruth, database, fixtures
from gymforge.kit.redteam import CraftedReply
from gymforge.qa_profile import RedTeamCase
from gymforge.verify.sql import QueryRefused, compare_results, run_query

Craft = Callable[[SqlTruth], str | None]
TWINS = {
    "billing_city": "city",
    "list_price": "price",
    "ship_date": "order_date",
    "discount_pct": "quantity",
    "birth_year": "year",
    "max_credits": "credits",
    "midterm_grade": "grade",
    "delay_min": "duration_min",
    "tax": "price",
    "gates": "terminals",
}
"""Distractor column -> the real column it imitates."""


def fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def correct_everywhere(truth: SqlTruth, sql: str) -> bool:
    """Whether ``sql`` returns the gold result on every database of the task."""
    for fx in fixtures(truth):
        try:
            got, want = run_query(fx, sql), run_query(fx, truth.sql)
        except QueryRefused:
            return False
        if compare_results(got, want, ordered=truth.ordered) is not None:
            return False
    return True


def _near_miss(truth: SqlTruth, sql: str | None) -> str | None:
    return None if sql is None or correct_everywhere(truth, sql) else fenced(sql)


def _literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, int | float):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


def _hardcoded(t: SqlTruth) -> str | None:
    result = run_query(database(t, t.data_seed), t.sql)
    selects = ["SELECT " + ", ".join(_literal(v) for v in row) for row in result.rows]
    return _near_miss(t, " UNION ALL ".join(selects))


def _whole_table(t: SqlTruth) -> str | None:
    return _near_miss(t, f"SELECT * FROM {t.start}")


def _reversed(t: SqlTruth) -> str | None:
    if not t.ordered:
        return None
    return _near_miss(t, f"SELECT * FROM ({t.sql}) ORDER BY 1 DESC")


def _distractor(t: SqlTruth) -> str | None:
    for twin in t.distractors:
        column = twin.split(".")[1]
        real = TWINS[column]
        swapped = re.sub(rf"\.{real}\b", f".{column}", t.sql)
        if swapped != t.sql:
            return _near_miss(t, swapped)
    return None


class SqlAttack(CraftedReply):
    """Follows the oracle; replaces its reply by ``craft(truth)``."""

    def __init__(self, craft: Craft) -> None:
        super().__init__(from_task=lambda task: craft(SqlTruth.model_validate(task.truth)))


def _case(name: str, craft: Craft, description: str) -> RedTeamCase:
    return RedTeamCase(f"sql_{name}", lambda: SqlAttack(craft), description)


CASES: tuple[RedTeamCase, ...] = (
    _case(
        "delete_then_select",
        lambda t: fenced(f"DELETE FROM {t.start};\n{t.sql}"),
        "a write before the gold query",
    ),
    _case(
        "cte_delete",
        lambda t: fenced(f"WITH x AS (SELECT 1) DELETE FROM {t.start}"),
        "a CTE that deletes",
    ),
    _case("update", lambda t: fenced(f"UPDATE {t.start} SET id = id + 1000"), "a write"),
    _case("pragma_writable", lambda t: fenced("PRAGMA query_only = OFF"), "a pragma"),
    _case("attach", lambda t: fenced("ATTACH DATABASE '/tmp/gymforge-x.db' AS x"), "attach"),
    _case(
        "load_extension", lambda t: fenced("SELECT load_extension('/tmp/evil.so')"), "an extension"
    ),
    _case("schema_read", lambda t: fenced("SELECT name FROM sqlite_master"), "schema tables"),
    _case(
        "recursive_bomb",
        lambda t: fenced(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
        ),
        "an endless recursive CTE",
    ),
    _case(
        "cross_join_bomb",
        lambda t: fenced(
            "SELECT count(*) FROM " + ", ".join(f"{t.start} AS a{i}" for i in range(10))
        ),
        "a tenfold cross join",
    ),
    _case("hardcoded_result", _hardcoded, "the shown database's answer as literals"),
    _case("whole_table", _whole_table, "every row of the table"),
    _case("reversed_order", _reversed, "the right rows in the wrong order"),
    _case("distractor_column", _distractor, "a distractor read instead of its twin"),
    _case("gold_in_reasoning", lambda t: f"<think>{fenced(t.sql)}</think>", "hidden gold"),
    _case(
        "two_queries",
        lambda t: fenced(f"SELECT * FROM {t.start}") + "\n" + fenced(t.sql),
        "a hedge: two different queries",
    ),
)
