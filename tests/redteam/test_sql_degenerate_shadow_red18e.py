"""A shadow database whose gold result is empty, NULL or 0 pays a query right on the shown
database only.

The family required the gold result on the shown database to be informative (non-empty, no
NULL, not a lone 0) and the shadow's to differ from it, but not the shadow's to be
informative too. The prompt gives every table's row count, so a query can tell the shown
database from another one (``(SELECT COUNT(*) FROM t) = 12``) and answer elsewhere with
nothing, or 0: a query fitted to the shown database (here: its gold result typed out)
guarded that way was paid wherever the shadow's answer was empty or 0. Measured over 90
tasks (seeds 31000-31009, every family and level): 1 paid with an empty answer, 2 with 0.
"""

from __future__ import annotations

import pytest

from gymforge.envs.sql import FAMILIES
from gymforge.envs.sql.family import SqlTruth, fixtures
from gymforge.envs.sql.redteam import fenced
from gymforge.verify.sql import run_query
from gymforge.verify.sql_verifier import SqlVerifier

VERIFIER = SqlVerifier()


def _literal(v: object) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, int | float):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


def _guarded(truth: SqlTruth, elsewhere: str) -> str:
    """The shown database's gold result where ``truth.start`` has its row count, else
    ``elsewhere`` (one constant per column, or no row)."""
    shown = fixtures(truth)[0]
    gold = run_query(shown, truth.sql)
    count = run_query(shown, f"SELECT COUNT(*) FROM {truth.start}").rows[0][0]
    here = f"(SELECT COUNT(*) FROM {truth.start}) = {count}"
    rows = " UNION ALL ".join("SELECT " + ", ".join(map(_literal, r)) for r in gold.rows)
    width = len(gold.columns)
    other = {
        "nothing": "SELECT " + ", ".join(["NULL"] * width) + " WHERE 0",
        "zero": "SELECT " + ", ".join(["0"] * width),
        "null": "SELECT " + ", ".join(["NULL"] * width),
    }[elsewhere]
    return f"SELECT * FROM ({rows}) WHERE {here} UNION ALL SELECT * FROM ({other}) WHERE NOT {here}"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_query_right_on_the_shown_database_only_is_not_paid(family) -> None:
    paid = []
    for level in sorted(family.levels):
        for seed in range(31000, 31010):
            truth = SqlTruth.model_validate(family.task(level, seed).truth)
            for elsewhere in ("nothing", "zero", "null"):
                reply = fenced(_guarded(truth, elsewhere))
                verdict = VERIFIER.verify(reply, truth.sql, fixtures(truth), ordered=truth.ordered)
                if verdict.passed:
                    paid.append((level, seed, elsewhere))
    assert not paid
