"""Episode records as a run writes them, for tests of what reads them (outcomes, the
summary, the progress bar's tally): one place that knows the record's fields."""

from __future__ import annotations

from typing import Any


def episode_row(
    i: int,
    *,
    success: bool = False,
    reason: str | None = "wrong",
    steps: int = 1,
    reward: float | None = None,
    components: dict[str, float] | None = None,
    task_id: str | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The ``i``-th episode's record: task ``t{i % 3}`` unless ``task_id`` is given, reward
    ``float(success)`` unless ``reward`` is, components ``{"task": reward}`` unless given;
    ``reason`` is its failure reason when it did not succeed."""
    reward = float(success) if reward is None else reward
    return {
        "record": "episode",
        "episode_id": f"e{i}",
        "task_id": f"t{i % 3}" if task_id is None else task_id,
        "seed": seed,
        "rollout": i,
        "family": "fam",
        "difficulty": 1,
        "split": "train",
        "steps": steps,
        "reward": reward,
        "reward_components": {"task": reward} if components is None else components,
        "terminated": True,
        "truncated": False,
        "success": success,
        "failure_reason": None if success else reason,
        "tokens": 0,
    }
