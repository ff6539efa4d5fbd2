"""Attack: read the judge's clock through a ``'now'`` the lexical check cannot see.

The SQL verifier refuses ``'now'`` literals and date functions without a time value,
because a verdict that depends on the clock changes on replay. But SQLite reads the clock
for any *value* equal to ``now``: ``date('n' || 'ow')``, ``time(char(110, 111, 119))``, a
blob ``X'6E6F77'``, or no time value at all under a quoted name (``"date"()``); and the
``'localtime'``/``'utc'`` modifiers read the host's time zone. A query such as
``... WHERE strftime('%S', 'n' || 'ow') < '30'`` is then judged a success in one half of
each minute and a failure in the other: the recorded verdict cannot be reproduced. Success
would mean such a query runs. The defence: the date functions are wrapped so that a clock
or time-zone argument, however computed, is a ``nondeterministic`` refusal.

The same through a ``now`` that ends in a NUL character: the wrapper compared the whole
Python string, while SQLite reads the argument as a C string, up to its first NUL, so
``date('n' || 'ow' || char(0))`` (or ``X'6E6F7700'``, or ``'utc' || char(0, 32)``) passed
the wrapper as not ``now`` and then read the clock (or the time zone) inside SQLite. The
wrapper now reads the argument as SQLite does, up to its first NUL.
"""

from __future__ import annotations

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.sql import FAMILIES, SqlEnv
from gymforge.envs.sql.family import SqlTruth, fixtures
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import QueryRefused, run_query

SHOP = next(f for f in FAMILIES if f.name == "sql.shop")
TASK = SHOP.task(1, 3)
FIXTURE = fixtures(SqlTruth.model_validate(TASK.truth))[0]

CLOCK_READS = [
    "SELECT date('n' || 'ow')",
    "SELECT time(char(110, 111, 119))",
    "SELECT julianday(replace('xow', 'x', 'n'))",
    "SELECT strftime('%s', upper('n') || 'ow')",
    "SELECT datetime(X'6E6F77')",
    "SELECT date('2023-01-01 23:30', 'local' || 'time')",
    "SELECT datetime('2023-01-01 23:30', trim(' utc '))",
    "SELECT name FROM customers WHERE date(name, 'n' || 'ow') IS NULL",
    'SELECT "date"()',  # no time value: now; the quotes hide the call from a lexical check
    "SELECT [time]()",
    "SELECT `datetime`()",
    """SELECT "strftime"('%s')""",
    # a NUL ends the argument where SQLite reads it
    "SELECT julianday('n' || 'ow' || char(0))",
    "SELECT date('n' || 'ow' || char(0) || 'anything after')",
    "SELECT datetime(X'6E6F7700')",
    "SELECT datetime(CAST(X'6E6F770078' AS TEXT))",
    "SELECT strftime('%s', 'N' || 'OW' || char(0))",
    "SELECT datetime('2023-01-01 12:00', 'local' || 'time' || char(0))",
    "SELECT datetime('2023-01-01 12:00', 'ut' || 'c' || char(0, 32))",
    "SELECT date('2023-01-01', '+1 day', 'n' || 'ow' || char(0))",
]


@pytest.mark.parametrize("sql", CLOCK_READS)
def test_a_computed_clock_read_is_refused(sql: str) -> None:
    with pytest.raises(QueryRefused) as err:
        run_query(FIXTURE, sql)
    assert err.value.reason == "nondeterministic"


@pytest.mark.parametrize("now", ["'n' || 'ow'", "'n' || 'ow' || char(0)"])
def test_a_clock_gated_gold_query_is_not_a_success(now: str) -> None:
    gated = f"SELECT * FROM ({TASK.truth['sql']}) WHERE strftime('%Y', {now}) > '2000'"
    env = SyncEnvironment(SqlEnv())
    try:
        env.reset(TASK.task_id, 0)
        result = env.step(Reply(text=fenced(gated)))
    finally:
        env.close()
    assert not result.info["success"]
    assert result.info["verdict"]["reason"] == "nondeterministic"


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("SELECT date('2023-03-04', '+1 month')", "2023-04-04"),
        ("SELECT strftime('%Y', '2023-03-04')", "2023"),
        ("SELECT julianday('2000-01-01')", 2451544.5),
        ("SELECT datetime(0, 'unixepoch')", "1970-01-01 00:00:00"),
        ("SELECT time('12:30', '+15 minutes')", "12:45:00"),
        # SQLite reads a date up to a NUL too: the same date as without what follows
        ("SELECT date('2023-03-04' || char(0) || 'n' || 'ow')", "2023-03-04"),
    ],
)
def test_dates_with_time_values_still_work(sql: str, value: object) -> None:
    assert run_query(FIXTURE, sql).rows == ((value,),)
