"""Attack: exhaust the judge's memory with a SQL result of many large cells.

Every cell is capped (``SQLITE_LIMIT_LENGTH``, 100 kB) and the row count too (1,000), but
not their product: ``WITH b(x) AS (SELECT <a 90 kB string>) SELECT x, x, ..., x FROM b,
customers AS c1, customers AS c2, customers AS c3`` is a few hundred characters and a few
VM steps per cell, yet the driver converts 1,001 rows of up to 2,000 such columns into
Python strings before the row cap is checked: up to 180 GB, an out-of-memory kill of the
process that judges (or a ``MemoryError`` that reads as the verifier's bug, not the
policy's failure). Success would mean such a result is fetched. The defence: a cap on
result columns and on the bytes fetched, checked row by row, each a ``too_large`` refusal.
"""

from __future__ import annotations

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.sql import FAMILIES, SqlEnv
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import SqlLimits

SHOP = next(f for f in FAMILIES if f.name == "sql.shop")
BIG = "replace(replace(replace(replace('aaaaaaaaaa', 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaa')"  # noqa: E501  # 90,000 characters


def _verdict(sql: str) -> dict:
    env = SyncEnvironment(SqlEnv())
    try:
        env.reset(SHOP.task_id(1, 3), 0)
        result = env.step(Reply(text=fenced(sql)))
    finally:
        env.close()
    assert result.terminated and not result.info["success"]
    assert result.reward_components["task"] == 0.0
    return result.info["verdict"]


def test_many_wide_columns_are_refused_before_they_are_fetched() -> None:
    # one row of 2,000 cells of 90 kB: 180 MB fetched by the unfixed judge
    columns = ", ".join(["x"] * 2_000)
    verdict = _verdict(f"WITH b(x) AS (SELECT {BIG}) SELECT {columns} FROM b")
    assert verdict["reason"] == "too_large", verdict


@pytest.mark.parametrize("width", [1, 4])
def test_many_rows_of_large_cells_stop_at_the_byte_cap(width: int) -> None:
    # 144 rows of `width` cells of 90 kB (13-52 MB), every row and cell within its own cap
    columns = ", ".join(["x"] * width)
    sql = f"WITH b(x) AS (SELECT {BIG}) SELECT {columns} FROM b, customers AS c1, customers AS c2"
    verdict = _verdict(sql)
    assert verdict["reason"] == "too_large", verdict
    assert SqlLimits().max_result_bytes < 144 * 90_000


def test_a_result_within_the_caps_is_still_judged() -> None:
    verdict = _verdict("SELECT name, city FROM customers")
    assert verdict["reason"] == "wrong_result", verdict
