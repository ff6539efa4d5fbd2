"""reset_isolation: back-to-back episodes share no state.

1. A whole episode (the oracle's, else a random one) on a fresh instance is the reference:
   every step's observation, reward, flags, info and state fingerprint.
2. A reused instance must reproduce it exactly after a *dirty* episode on another task —
   both a finished episode and a random episode abandoned midway. Comparing whole episodes,
   not just the state after reset, catches counters and caches that ``reset`` forgets.
3. Two instances stepped in lockstep must produce exactly what each produced alone.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.env import Environment
from gymforge.core.seeding import canonical_json, fingerprint
from gymforge.qa.checks.common import CheckFailed, QAOptions, jobs, play, run_async
from gymforge.qa.target import QATarget
from gymforge.rollout.episode import step_outcome
from gymforge.rollout.policy import EpisodeContext, Policy
from gymforge.rollout.scripted import OraclePolicy, RandomPolicy
from gymforge.trajectory.replay import ACTION_ADAPTER, COMPARED

NAME = "reset_isolation"
Records = list[dict[str, Any]]


def _view(records: Records) -> list[str]:
    """The deterministic part of every step of an episode, canonicalised."""
    return [canonical_json({k: r[k] for k in COMPARED}) for r in records[:-1]]


def _probe(target: QATarget) -> Policy:
    return OraclePolicy() if target.has_oracle else RandomPolicy(reply_rate=0.02)


async def _fresh(target: QATarget, pairs: list[tuple[str, int]]) -> list[Records]:
    episodes = []
    for task_id, seed in pairs:
        env = target.factory()
        try:
            episodes.append(await play(env, _probe(target), task_id, seed))
        finally:
            await env.close()
    return episodes


async def _abandon(env: Environment, task_id: str, seed: int) -> None:
    """Start an episode with a few random actions and walk away from it."""
    policy = RandomPolicy(reply_rate=0.0)
    await policy.start(EpisodeContext(task_id, seed, env))
    obs = await env.reset(task_id, seed)
    for _ in range(3):
        result = await env.step((await policy.act(obs)).action)
        obs = result.observation
        if result.terminated or result.truncated:
            break


async def _dirty(target: QATarget, pairs: list[tuple[str, int]], fresh: list[Records]) -> int:
    env = target.factory()
    checked = 0
    try:
        for i, (task_id, seed) in enumerate(pairs):
            other_id, other_seed = pairs[(i + 1) % len(pairs)]
            want = _view(fresh[i])
            for dirt in ("a finished episode", "an abandoned episode"):
                if dirt == "a finished episode":
                    await play(env, _probe(target), other_id, other_seed)
                else:
                    await _abandon(env, other_id, other_seed)
                got = _view(await play(env, _probe(target), task_id, seed))
                if got != want:
                    step = next(
                        (k for k, (x, y) in enumerate(zip(got, want, strict=False)) if x != y),
                        min(len(got), len(want)),
                    )
                    raise CheckFailed(
                        f"after {dirt} on {other_id}, the episode ({task_id}, seed {seed}) "
                        f"on the reused instance differs from a fresh instance's at step {step}"
                    )
                checked += 1
    finally:
        await env.close()
    return checked


async def _interleaved(target: QATarget, a: Records, b: Records) -> int:
    """Replay the action logs of two solo episodes on two instances, alternating steps."""
    envs = [target.factory(), target.factory()]
    logs = [a[:-1], b[:-1]]
    try:
        for env, log in zip(envs, logs, strict=True):
            await env.reset(log[0]["task_id"], log[0]["seed"])
        compared = 0
        for step in range(1, max(len(a), len(b)) - 1):
            for env, log in zip(envs, logs, strict=True):
                if step >= len(log):
                    continue
                result = await env.step(ACTION_ADAPTER.validate_python(log[step]["action"]))
                got = step_outcome(result, fingerprint(await env.snapshot()))
                if canonical_json(got) != canonical_json({k: log[step][k] for k in got}):
                    raise CheckFailed(
                        f"interleaved instances diverge from solo runs at step "
                        f"{step} of {log[0]['task_id']}"
                    )
                compared += 1
        return compared
    finally:
        for env in envs:
            await env.close()


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    pairs = jobs(target, max(4, opts.episodes // 3), opts.seed + 1, "all")
    fresh = run_async(_fresh(target, pairs))
    dirty = run_async(_dirty(target, pairs, fresh))
    interleaved = sum(
        run_async(_interleaved(target, fresh[i], fresh[i + 1]))
        for i in range(0, min(4, len(fresh)) - 1, 2)
    )
    metrics = {"episodes_after_dirt": dirty, "interleaved_steps": interleaved}
    return (
        f"{dirty} episodes on a reused instance after dirty episodes match fresh "
        f"instances step for step; {interleaved} interleaved steps match solo runs",
        metrics,
    )
