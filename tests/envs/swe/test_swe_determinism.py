"""A task id is the same task in every process: string hashing (PYTHONHASHSEED) must not
leak into the generators (a set's iteration order once picked a cross-module bug)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gymforge.envs.swe import FAMILIES
from gymforge.envs.swe.repogen import callers, units_of
from gymforge.envs.swe.templates import PROJECTS

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = (
    "import hashlib, json\n"
    "from gymforge.envs.swe import SweEnv\n"
    "ids = {ids!r}\n"
    "for tid in ids:\n"
    "    t = SweEnv.tasks.resolve(tid)\n"
    "    print(hashlib.sha256(json.dumps(t.truth, sort_keys=True).encode()).hexdigest())\n"
)


def _fingerprints(ids: list[str], hash_seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(ids=ids)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.split()


def test_tasks_do_not_depend_on_the_string_hash_seed() -> None:
    ids = [f.task_id(d, s) for f in FAMILIES for d in (2, 3) for s in range(3)]
    first = _fingerprints(ids, "1")
    assert len(first) == len(ids)
    assert _fingerprints(ids, "2") == first
    assert _fingerprints(ids, "12345") == first


def test_callers_come_in_distance_then_name_order() -> None:
    project = PROJECTS["gridlib"]
    found = callers(units_of(project), "geometry.in_bounds")
    assert list(found.items()) == [("geometry.neighbors", 1), ("paths.reachable", 1)]
