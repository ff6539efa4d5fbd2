"""Attack: stall the SQL judge inside one VM step, with a string search quadratic in the cell
cap.

The query's budget is counted in SQLite VM steps by a progress handler, which can only stop
a query between steps (and looked at the wall clock only every 160,000 steps). But one step
may call ``trim(x, y)``, which compares every character of ``x`` with every character of
``y``: on a 90 kB ``x`` and a 7,000-character ``y`` (both within the 100 kB cell cap) one
call took 1.5 s, never interruptible; ``instr``, ``replace``, ``like`` and ``glob`` compare
a needle or pattern at every position of the haystack (60 ms a call at the cap). Evaluated
once per row of a cross join, such a call is a few steps and thousands of them run between
two calls of the handler: the judge's worker is held for minutes by one answer of a few
hundred characters, far past the 2 s backstop. Success would be such a query running (its
verdict ``wrong_result`` after the work). The defence charges each call's work to the step
budget before SQLite's function runs (``sql_cost``), so it is ``too_slow``, deterministically.
"""

from __future__ import annotations

import sqlite3

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.sql import FAMILIES, SqlEnv
from gymforge.envs.sql.family import SqlTruth, fixtures
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import run_query

SHOP = next(f for f in FAMILIES if f.name == "sql.shop")
TASK = SHOP.task(1, 3)
FIXTURE = fixtures(SqlTruth.model_validate(TASK.truth))[0]
_X90K = "replace(replace(replace(replace('xxxxxxxxxx', 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxx')"  # noqa: E501  # 90,000 characters


def text(char: str, length: int) -> str:
    """SQL for ``length`` (at most 90,000) copies of ``char``, a few dozen characters long."""
    return f"substr(replace({_X90K}, 'x', '{char}'), 1, {length})"


NEEDLE = "substr(x, 1, 45000) || 'b'"
ATTACKS = {
    # one call, one VM step: 90,000 x 7,000 character comparisons
    "trim_once": f"WITH s(x, y) AS (SELECT {text('a', 90_000)}, {text('b', 7_000)} || 'a') "
    "SELECT length(trim(x, y)) FROM s",
    # a call per row of a cross join (144 rows): a 45,001-byte needle tried at 45,000 positions
    "instr_per_row": f"WITH s(x) AS (SELECT {text('a', 90_000)}) SELECT count(*) "
    f"FROM s, customers AS c1, customers AS c2 WHERE instr(x || c1.id || c2.id, {NEEDLE}) > 0",
    "replace_per_row": f"WITH s(x) AS (SELECT {text('a', 90_000)}) SELECT sum(length("
    f"replace(x || c1.id || c2.id, {NEEDLE}, ''))) FROM s, customers AS c1, customers AS c2",
    # a 199-character pattern tried at each of 90,000 positions, per row
    "like_per_row": f"WITH s(x) AS (SELECT {text('a', 90_000)}) "
    "SELECT count(*) FROM s, customers AS c1, customers AS c2 "
    f"WHERE x || c1.id || c2.id LIKE '%' || {text('a', 197)} || 'b%'",
    "glob_per_row": f"WITH s(x) AS (SELECT {text('a', 90_000)}) "
    "SELECT count(*) FROM s, customers AS c1, customers AS c2 "
    f"WHERE x || c1.id || c2.id GLOB '*' || {text('a', 197)} || 'b*'",
}


def _verdict(sql: str) -> dict:
    env = SyncEnvironment(SqlEnv())
    try:
        env.reset(TASK.task_id, 0)
        result = env.step(Reply(text=fenced(sql)))
    finally:
        env.close()
    assert result.terminated and not result.info["success"]
    return result.info["verdict"]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_quadratic_search_is_stopped_by_the_step_budget(attack: str) -> None:
    verdict = _verdict(ATTACKS[attack])
    assert verdict["reason"] == "too_slow", verdict


CALLS = [
    "instr('hello world', 'o')", "instr(X'0102030203', X'0203')", "instr('naïve café', 'é')",
    "instr(12345, 34)", "instr(NULL, 'a')", "instr('abc', '')",
    "replace('a.b.c', '.', '--')", "replace('abc', '', 'x')", "replace(1.5, '.', ',')",
    "replace(X'616263', 'b', 'Z')", "replace('aaa', 'a', NULL)",
    "trim('  x  ')", "ltrim('xxyxx', 'x')", "rtrim('xxyxx', 'xy')", "trim('éaé', 'é')",
    "trim(NULL)", "trim(123.0, '0')",
    "'Lyon' LIKE 'ly%'", "'Lyon' LIKE 'L_on'", "'a%b' LIKE 'a\\%b' ESCAPE '\\'",
    "'Ärger' LIKE 'ä%'", "NULL LIKE 'a'", "'abc' NOT LIKE '%c'",
    "'Lyon' GLOB 'L*'", "'Lyon' GLOB 'l*'", "'x1' GLOB '[a-z][0-9]'", "like('a%', 'abc')",
    "glob('*b*', 'abc')",
]  # fmt: skip


def test_the_charged_functions_keep_sqlites_results() -> None:
    plain = sqlite3.connect(":memory:")
    try:
        want = plain.execute(f"SELECT {', '.join(CALLS)}").fetchone()
    finally:
        plain.close()
    assert run_query(FIXTURE, f"SELECT {', '.join(CALLS)}").rows == (want,)


def test_a_like_pattern_over_the_cap_is_still_refused() -> None:
    verdict = _verdict(f"SELECT name FROM customers WHERE name LIKE {text('a', 300)}")
    assert verdict["reason"] != "wrong_result", verdict
