"""The sql families' tasks, pinned: 720 of them (every family, every level, versions 1 and
2, seeds 0-39) hash as the commit before the families ran their own queries on one
connection per database (``sql_trusted``) did. A change of how a task is drawn that is
meant to change no task must leave this digest as it is."""

from __future__ import annotations

import hashlib
import json

from gymforge.envs.sql.family import FAMILIES

DIGEST = "32112544140192ac70174cda94e2dcfb25765a10ff075e3732da0905ce87e0e2"


def sql_tasks_digest(seeds: int = 40) -> tuple[int, str]:
    """How many tasks, and the SHA-256 of their ids, prompts and truths."""
    h, n = hashlib.sha256(), 0
    for family in FAMILIES:
        for version in (1, 2):
            drawn = family.at_version(version)
            for level in sorted(drawn.levels):
                for seed in range(seeds):
                    task = drawn.task(level, seed)
                    text = json.dumps([task.task_id, task.prompt, task.truth], sort_keys=True)
                    h.update(text.encode())
                    n += 1
    return n, h.hexdigest()


def test_720_sql_tasks_are_byte_identical_to_the_pinned_ones() -> None:
    assert sql_tasks_digest() == (720, DIGEST)
