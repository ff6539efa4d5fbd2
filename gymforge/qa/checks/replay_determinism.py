"""replay_determinism: same seed and action log, same states, observations and rewards.

Episodes from the oracle and the random policy (which emits invalid and malformed actions)
over many tasks and seeds are sealed into trajectory form and replayed on a *fresh*
instance; every step must match. Episodes with injected faults are counted and reported.
"""

from __future__ import annotations

from typing import Any

from gymforge.qa.checks.common import CheckFailed, QAOptions, jobs, play_many, run_async
from gymforge.qa.target import QATarget
from gymforge.trajectory.io import sealed_log
from gymforge.trajectory.replay import replay_episode

NAME = "replay_determinism"


async def _replay_all(
    target: QATarget, episodes: list[list[dict[str, Any]]]
) -> tuple[int, str | None]:
    """Replay each episode on its own fresh instance (the episodes were recorded on one
    reused instance, so state that survives ``reset`` shows up as a divergence too)."""
    steps = 0
    for records in episodes:
        env = target.factory()
        try:
            n, divergence = await replay_episode(env, sealed_log(records))
        finally:
            await env.close()
        steps += n
        if divergence is not None:
            return steps, divergence.describe()
    return steps, None


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    pairs = jobs(target, opts.episodes, opts.seed, "all")
    episodes = []
    policies = ["random"] + (["oracle"] if target.has_oracle else [])
    for policy in policies:
        episodes += run_async(play_many(target, policy, pairs))
    faulted = sum(any("fault" in r.get("info", {}) for r in e[:-1]) for e in episodes)
    steps, divergence = run_async(_replay_all(target, episodes))
    metrics = {"episodes": len(episodes), "steps": steps, "faulted_episodes": faulted}
    if divergence:
        raise CheckFailed(f"replay diverged: {divergence}", metrics)
    return (
        f"{len(episodes)} episodes ({', '.join(policies)}; {faulted} with injected faults), "
        f"{steps} steps replayed identically on a fresh instance",
        metrics,
    )
