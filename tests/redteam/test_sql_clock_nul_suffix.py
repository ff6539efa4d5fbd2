"""Attack: read the judge's clock through a ``now`` that ends in a NUL character.

The date functions are overridden to refuse a ``now``, ``localtime`` or ``utc`` argument
however computed; the override compared the whole Python string. SQLite reads the argument
as a C string, up to its first NUL, so ``date('n' || 'ow' || char(0))`` (or the blob
``X'6E6F7700'``, or ``'utc' || char(0, 32)``) passed the override as not ``now`` and then
read the clock (or the host's time zone) inside SQLite. A query gated on it
(``WHERE strftime('%S', 'n' || 'ow' || char(0)) < '30'``) is judged a success in half of
each minute: the recorded verdict cannot be reproduced. Success would be such a query
running; the defence reads the argument as SQLite does, up to its first NUL.
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

NUL_CLOCK_READS = [
    "SELECT julianday('n' || 'ow' || char(0))",
    "SELECT date('n' || 'ow' || char(0) || 'anything after')",
    "SELECT datetime(X'6E6F7700')",
    "SELECT datetime(CAST(X'6E6F770078' AS TEXT))",
    "SELECT strftime('%s', 'N' || 'OW' || char(0))",
    "SELECT datetime('2023-01-01 12:00', 'local' || 'time' || char(0))",
    "SELECT datetime('2023-01-01 12:00', 'ut' || 'c' || char(0, 32))",
    "SELECT date('2023-01-01', '+1 day', 'n' || 'ow' || char(0))",
]


@pytest.mark.parametrize("sql", NUL_CLOCK_READS)
def test_a_clock_word_cut_by_a_nul_is_refused(sql: str) -> None:
    with pytest.raises(QueryRefused) as err:
        run_query(FIXTURE, sql)
    assert err.value.reason == "nondeterministic", err.value


def test_a_nul_gated_gold_query_is_not_a_success() -> None:
    clock = "strftime('%Y', 'n' || 'ow' || char(0))"
    gated = f"SELECT * FROM ({TASK.truth['sql']}) WHERE {clock} > '2000'"
    env = SyncEnvironment(SqlEnv())
    try:
        env.reset(TASK.task_id, 0)
        result = env.step(Reply(text=fenced(gated)))
    finally:
        env.close()
    assert not result.info["success"]
    assert result.info["verdict"]["reason"] == "nondeterministic"


def test_a_date_with_a_nul_after_it_is_still_a_date() -> None:
    # SQLite reads it up to the NUL too: the same date as without it
    assert run_query(FIXTURE, "SELECT date('2023-03-04' || char(0) || 'n' || 'ow')").rows == (
        ("2023-03-04",),
    )
