"""A hard-negative pool: tasks the policy fails, persisted in SQLite, plus nearby variants.

``record(task_id, success)`` grows the pool from failures (held-out tasks are refused and
counted, never stored). ``sample`` draws stored tasks weighted by their failure rate.
``spawn_variants`` adds adversarial neighbours of the hardest tasks: the same family with
one knob moved one step (more customers, more distractors, a bigger grid...), as explicit-
param task ids, held-out regions excluded.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import derive_seed
from gymforge.tasks.source import TRAINING_PATHS, TaskSource
from gymforge.tasks.task_id import parse_task_id

SCHEMA = """
CREATE TABLE IF NOT EXISTS hard_negatives (
    task_id  TEXT PRIMARY KEY,
    family   TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    origin   TEXT NOT NULL DEFAULT 'failed',
    parent   TEXT
);
"""


class HardNegativePool:
    def __init__(self, source: TaskSource, path: str | Path = ":memory:") -> None:
        self.source = source
        self.db = sqlite3.connect(str(path))
        self.db.executescript(SCHEMA)
        self.refused_heldout = 0

    def close(self) -> None:
        self.db.close()

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM hard_negatives").fetchone()[0])

    def record(self, task_id: str, success: bool) -> bool:
        """Count an outcome; a failure adds the task. Returns False for a held-out task."""
        task = self.source.resolve(task_id)
        if task.split == "heldout":
            self.refused_heldout += 1
            return False
        with self.db:
            if not success:
                self.db.execute(
                    "INSERT INTO hard_negatives (task_id, family) VALUES (?, ?) "
                    "ON CONFLICT(task_id) DO NOTHING",
                    (task_id, task.family),
                )
            self.db.execute(
                "UPDATE hard_negatives SET attempts = attempts + 1, failures = failures + ? "
                "WHERE task_id = ?",
                (0 if success else 1, task_id),
            )
        return True

    def rows(self) -> list[tuple[str, int, int, str]]:
        """``(task_id, attempts, failures, origin)`` in task id order."""
        return self.db.execute(
            "SELECT task_id, attempts, failures, origin FROM hard_negatives ORDER BY task_id"
        ).fetchall()

    def sample(self, n: int, seed: int) -> list[str]:
        """``n`` stored task ids, with replacement, weighted by failure rate (+1 smoothing)."""
        rows = self.rows()
        if not rows:
            raise UnknownTaskError("the hard-negative pool is empty")
        weights = [(f + 1) / (a + 2) for _, a, f, _ in rows]
        r = random.Random(derive_seed("hard-negatives", seed))
        return [row[0] for row in r.choices(rows, weights=weights, k=n)]

    def variants(self, task_id: str, seed: int) -> list[str]:
        """Training-split neighbours of a family task (none for dataset tasks)."""
        try:
            tid = parse_task_id(task_id)
        except UnknownTaskError:
            return []
        family = self.source.families[tid.family]
        task = self.source.resolve(task_id)
        out = []
        for i, params in enumerate(family.neighbors(task.params)):
            if not self.source.split.is_heldout(family.name, params):
                out.append(
                    family.variant_id(params, derive_seed("variant", seed, tid.seed, i) % 10**9)
                )
        return out

    def spawn_variants(self, top: int, seed: int) -> list[str]:
        """Add the variants of the ``top`` most-failed tasks; return the new ids."""
        hardest = self.db.execute(
            "SELECT task_id FROM hard_negatives WHERE origin = 'failed' "
            "ORDER BY CAST(failures AS REAL) / attempts DESC, failures DESC, task_id "
            "LIMIT ?",
            (top,),
        ).fetchall()
        added = []
        with self.db:
            for (parent,) in hardest:
                for vid in self.variants(parent, seed):
                    cur = self.db.execute(
                        "INSERT INTO hard_negatives (task_id, family, origin, parent) "
                        "VALUES (?, ?, 'variant', ?) ON CONFLICT(task_id) DO NOTHING",
                        (vid, parse_task_id(vid).family, parent),
                    )
                    if cur.rowcount:
                        added.append(vid)
        return added


def _pool_path(source: TaskSource, n: int, seed: int) -> list[str]:
    """Feed failures on every split (held-out ones must be refused), grow variants, sample."""
    pool = HardNegativePool(source)
    try:
        for task_id in source.sample(max(8, n // 4), seed, "all"):
            pool.record(task_id, False)
        pool.spawn_variants(top=8, seed=seed)
        return pool.sample(n, seed) if len(pool) else []
    finally:
        pool.close()


TRAINING_PATHS["HardNegativePool"] = _pool_path
