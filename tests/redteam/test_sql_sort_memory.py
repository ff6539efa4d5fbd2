"""Attack: make the ``sql`` judge hold a gigabyte of heap with one query's sort.

Every cell is capped (100 kB) and so is the result (1,000 rows, 4 MiB), but not the data a
query sorts or groups before its first row comes out: ``WITH b(x) AS (SELECT <a 20 kB
string>), n(i) AS (VALUES (0), ..., (29)) SELECT length(k) FROM (SELECT x || n1.i || '-' ||
n2.i || '-' || n3.i AS k FROM b, n AS n1, n AS n2, n AS n3) ORDER BY k`` builds 27,000
distinct keys of 20 kB (540 MB) in a few VM steps each, well within the step budget (a
cross join of the fixture's own tables does the same). The ``sql`` environment's databases
come as bytes; loaded into SQLite's ``memdb`` VFS, the connection makes its temporary files
(the sorter's spill, ``GROUP BY`` and ``DISTINCT`` b-trees) in the heap too: the unfixed
judge's peak resident memory grew by 550 MB for this query and for its ``GROUP BY k`` twin
(by 1,026 MB with 40 kB keys; fixed: 17 MB), which a run of 64 concurrent judges
multiplies into an out-of-memory kill (an infrastructure error: the episode retried, not
counted). Success would mean the judge's peak memory grows by hundreds of MB. The
defence: fixtures given as bytes are served from a private read-only file
(``gymforge/verify/sql_files.py``), so SQLite spills to unlinked temporary files and keeps
only its page caches in memory; the query is still refused.

Memory is measured, not timed: each attack runs in a fresh child process that reports its
peak resident set (``VmHWM``) before and after the step.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gymforge.verify import sql_files
from gymforge.verify.sql import QueryRefused, SqlFixture, run_query
from gymforge.verify.sql_files import write_private_copy

KEY = "replace(replace(replace(replace('aa', 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa')"  # noqa: E501  # 20,000 characters
NUMBERS = "VALUES " + ", ".join(f"({i})" for i in range(30))
KEYS = "(SELECT x || n1.i || '-' || n2.i || '-' || n3.i AS k FROM b, n AS n1, n AS n2, n AS n3)"
WITH = f"WITH n(i) AS ({NUMBERS}), b(x) AS (SELECT {KEY})"
ATTACKS = {
    "order_by": f"{WITH} SELECT length(k) FROM {KEYS} ORDER BY k",
    "group_by": f"{WITH} SELECT count(*) FROM {KEYS} GROUP BY k",
}
BOUND_MIB = 256
CHILD = textwrap.dedent(
    """
    import json, sys
    from gymforge.core import Reply, SyncEnvironment
    from gymforge.envs.sql import FAMILIES, SqlEnv
    from gymforge.envs.sql.redteam import fenced

    def peak_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM")

    shop = next(f for f in FAMILIES if f.name == "sql.shop")
    env = SyncEnvironment(SqlEnv())
    env.reset(shop.task_id(1, 3), 0)
    before = peak_mib()
    result = env.step(Reply(text=fenced(sys.argv[1])))
    after = peak_mib()
    env.close()
    verdict = result.info["verdict"]
    print(json.dumps({"grew_mib": after - before, "reason": verdict["reason"],
                      "detail": verdict["facts"].get("detail"),
                      "success": result.info["success"],
                      "task": result.reward_components["task"]}))
    """
)


def _judge_in_child(sql: str) -> dict:
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, sql], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2_000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_wide_sort_does_not_grow_the_judge_heap(attack: str) -> None:
    report = _judge_in_child(ATTACKS[attack])
    assert not report["success"] and report["task"] == 0.0, report
    # refused with a reason: stopped (steps or the backstop), or over the row or byte caps
    assert report["reason"] in {"too_slow", "too_many_rows", "too_large"}, report
    assert report["grew_mib"] < BOUND_MIB, report


def test_fixture_bytes_live_in_a_private_read_only_file() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    fixture = SqlFixture.from_connection(conn)
    conn.close()
    path = Path(fixture._holder.path)
    assert "immutable=1" in fixture.uri and "mode=ro" in fixture.uri
    assert stat.S_IMODE(path.stat().st_mode) == 0o400
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert run_query(fixture, "SELECT a FROM t").rows == ((1,),)
    for escape in (f"ATTACH '{path}' AS other", "SELECT 1 FROM t; DELETE FROM t"):
        with pytest.raises(QueryRefused):
            run_query(fixture, escape)
    del fixture
    assert not path.exists()  # deleted with the fixture


def test_bytes_that_are_not_a_database_are_refused_and_leave_no_file() -> None:
    before = set(_private_files())
    with pytest.raises(sqlite3.DatabaseError):
        write_private_copy(b"not a database" * 100)
    assert set(_private_files()) == before


def _private_files() -> list[Path]:
    return [p for d in sql_files._dirs.values() for p in d.iterdir()]
