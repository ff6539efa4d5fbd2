"""The runner: many episodes, a pool of environments, durable trajectory output.

``run`` plays one episode per ``(task_id, seed)`` job with up to ``concurrency`` episodes
in flight (each on its own environment instance), writes each finished episode to
``trajectories.jsonl`` (fsync per episode), and returns the summary it also writes to
``summary.json``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import InfraError
from gymforge.rollout.episode import EpisodeKeys, run_episode
from gymforge.rollout.policy import Policy
from gymforge.trajectory.io import TrajectoryWriter
from gymforge.trajectory.schema import component_totals

log = logging.getLogger("gymforge.runner")


@dataclass
class RunResult:
    summary: dict[str, Any]
    episodes: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def summarize(episodes: Sequence[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """Aggregate episode records into the ``summary.json`` fields.

    Episodes whose verifier crashed (``failure_reason == "verifier_error"``) are kept in the
    trajectory file but not scored: they are counted in ``verifier_errors`` and left out of
    every rate and mean, since the policy was never judged.
    """
    errored = [e for e in episodes if e["failure_reason"] == "verifier_error"]
    episodes = [e for e in episodes if e["failure_reason"] != "verifier_error"]
    n = len(episodes)
    comps = component_totals([e["reward_components"] for e in episodes])

    def mean(values: list[float]) -> float:
        return math.fsum(values) / n if n else 0.0

    return {
        **extra,
        "episodes": n,
        "verifier_errors": len(errored),
        "success_rate": mean([float(e["success"]) for e in episodes]),
        "mean_reward": mean([e["reward"] for e in episodes]),
        "mean_reward_components": {k: v / n for k, v in sorted(comps.items())},
        "terminated": sum(e["terminated"] for e in episodes),
        "truncated": sum(e["truncated"] for e in episodes),
        "mean_steps": mean([float(e["steps"]) for e in episodes]),
        "failure_reasons": dict(
            Counter(e["failure_reason"] for e in episodes if e["failure_reason"]).most_common()
        ),
    }


async def run(
    env_factory: Callable[[], Environment],
    policy_factory: Callable[[], Policy],
    jobs: Sequence[tuple[str, int]],
    out_dir: str | Path | None,
    *,
    concurrency: int = 1,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    summary_extra: dict[str, Any] | None = None,
) -> RunResult:
    """Run every ``(task_id, seed)`` job once. ``out_dir=None`` keeps records in memory only."""
    run_id = uuid.uuid4().hex[:12]
    writer = TrajectoryWriter(Path(out_dir) / "trajectories.jsonl") if out_dir else None
    queue: asyncio.Queue[tuple[int, str, int]] = asyncio.Queue()
    for i, (task_id, seed) in enumerate(jobs):
        queue.put_nowait((i, task_id, seed))
    finished: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []

    async def worker() -> None:
        env = env_factory()
        try:
            while not queue.empty():
                i, task_id, seed = queue.get_nowait()
                policy = policy_factory()
                keys = EpisodeKeys(
                    run_id=run_id,
                    episode_id=f"{run_id}-{i:06d}",
                    task_id=task_id,
                    seed=seed,
                    env_id=env.spec.id,
                    env_version=env.spec.version,
                    renderer_version=env.spec.renderer_version,
                    policy_checkpoint=policy.checkpoint,
                )
                try:
                    records = await run_episode(env, policy, keys)
                except InfraError as err:
                    log.warning(
                        "episode %s (%s seed %d) not scored: %s",
                        keys.episode_id,
                        task_id,
                        seed,
                        err,
                    )
                    errors.append(f"{task_id} seed {seed}: {err}")
                    continue
                if writer is not None:
                    writer.write_episode(records)
                finished.append((i, records[-1]))
                if on_episode is not None:
                    on_episode(records[-1])
        finally:
            await env.close()

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(jobs))))))
    finally:
        if writer is not None:
            writer.close()
    episodes = [rec for _, rec in sorted(finished, key=lambda t: t[0])]
    summary = summarize(episodes, run_id=run_id, **(summary_extra or {}))
    summary["infra_errors"] = len(errors)
    if out_dir:
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return RunResult(summary, episodes, errors)
