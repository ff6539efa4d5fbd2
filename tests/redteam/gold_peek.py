"""Shared by the gold-peek attacks: a math task with a long gold answer, and a search of a
reply for that answer."""

from __future__ import annotations

import json
from typing import Any

from gymforge.envs.math.env import MathEnv

TIMING_KEYS = frozenset({"server_ms", "timing"})


def task_with_long_gold() -> tuple[str, str]:
    """A math task id whose gold answer has at least three characters (so it cannot turn
    up by chance in a count), and that answer."""
    env = MathEnv()
    for task_id in env.tasks.sample(200, seed=7):
        gold = env.truth_of(env.tasks.resolve(task_id)).answer
        if len(gold) >= 3:
            return task_id, gold
    raise AssertionError("no math task with a gold answer of 3+ characters in 200")


def shows(reply: Any, gold: str) -> bool:
    """Whether ``reply`` (a decoded JSON message) carries ``gold`` anywhere but in timings."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMING_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return gold in json.dumps(strip(reply))
