"""A question whose filter decides nothing on the task's databases pays a query that ignores it.

The family draws a question until its gold result on the shown database differs from the
shadow's; nothing checked that the question's filter mattered. "Products that appear in
order items whose quantity is at most 7" over order items whose quantities are almost all
at most 7, or "the lowest duration of the flights from airports with at least 2 terminals"
where the shortest flight leaves from such an airport anyway: the gold query without its
``WHERE`` gave the gold result on both databases, and was paid. So was the filter read
with the wrong strictness (``>`` for "at least"). Measured over 108 tasks (seeds
9000-9011, every family and level): dropping the filter passed on 2 of 45 tasks where it
is a wrong query, flipping ``>=``/``<=`` on 3 of 21.
"""

from __future__ import annotations

import re

import pytest

from gymforge.envs.sql import FAMILIES
from gymforge.envs.sql.family import SqlTruth, fixtures
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import SqlVerifier

VERIFIER = SqlVerifier()
FILTERED = frozenset({"list", "count", "agg_num"})


def _near_misses(sql: str) -> dict[str, str]:
    out = {"no_filter": re.sub(r" WHERE .*?(?= ORDER BY|$)", "", sql)}
    flipped = re.sub(r" (>=|<=) (?=-?\d)", lambda m: f" {m[1][0]} ", sql)
    if flipped != sql:
        out["wrong_strictness"] = flipped
    return out


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_query_ignoring_the_filter_is_not_paid(family) -> None:
    paid = []
    for level in sorted(family.levels):
        for seed in range(9000, 9012):
            truth = SqlTruth.model_validate(family.task(level, seed).truth)
            if truth.kind not in FILTERED:
                continue
            for name, sql in _near_misses(truth.sql).items():
                verdict = VERIFIER.verify(
                    fenced(sql), truth.sql, fixtures(truth), ordered=truth.ordered
                )
                if verdict.passed:
                    paid.append((level, seed, name, sql))
    assert not paid
