"""reset_isolation: back-to-back episodes share no state.

1. The observation and state fingerprint right after ``reset(task_id, seed)`` on a fresh
   instance are the reference.
2. A reused instance must reproduce them after a *dirty* episode on another task — both a
   finished oracle episode and a random episode abandoned midway.
3. Two instances stepped in lockstep must produce exactly what each produced alone.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.seeding import canonical_json, fingerprint
from gymforge.qa.checks.common import CheckFailed, QAOptions, jobs, play, run_async
from gymforge.qa.target import QATarget
from gymforge.rollout.episode import step_outcome
from gymforge.rollout.policy import EpisodeContext
from gymforge.rollout.scripted import OraclePolicy, RandomPolicy
from gymforge.trajectory.replay import ACTION_ADAPTER

NAME = "reset_isolation"


async def _reset_view(env: Any, task_id: str, seed: int) -> str:
    obs = await env.reset(task_id, seed)
    return canonical_json([obs.model_dump(mode="json"), fingerprint(await env.snapshot())])


async def _dirty_resets(target: QATarget, pairs: list[tuple[str, int]]) -> int:
    fresh_views = []
    for task_id, seed in pairs:
        env = target.factory()
        fresh_views.append(await _reset_view(env, task_id, seed))
        await env.close()
    env = target.factory()
    checked = 0
    try:
        for i, (task_id, seed) in enumerate(pairs):
            other_id, other_seed = pairs[(i + 1) % len(pairs)]
            # a finished episode (oracle if any, else random) on another task...
            dirty = OraclePolicy() if target.has_oracle else RandomPolicy()
            await play(env, dirty, other_id, other_seed)
            if await _reset_view(env, task_id, seed) != fresh_views[i]:
                raise CheckFailed(
                    f"after a finished episode on {other_id}, reset({task_id}, "
                    f"{seed}) differs from a fresh instance's reset"
                )
            # ...and an episode abandoned midway
            policy = RandomPolicy(reply_rate=0.0)
            await policy.start(EpisodeContext(other_id, other_seed, env))
            obs = await env.reset(other_id, other_seed)
            for _ in range(3):
                result = await env.step((await policy.act(obs)).action)
                obs = result.observation
                if result.terminated or result.truncated:
                    break
            if await _reset_view(env, task_id, seed) != fresh_views[i]:
                raise CheckFailed(
                    f"after an abandoned episode on {other_id}, reset({task_id}, "
                    f"{seed}) differs from a fresh instance's reset"
                )
            checked += 2
    finally:
        await env.close()
    return checked


async def _interleaved(target: QATarget, a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
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
                want = {k: log[step][k] for k in got}
                if canonical_json(got) != canonical_json(want):
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
    resets = run_async(_dirty_resets(target, pairs))
    solo = []
    for task_id, seed in pairs[:4]:

        async def one(task_id: str = task_id, seed: int = seed) -> list[dict[str, Any]]:
            env = target.factory()
            try:
                return await play(env, RandomPolicy(reply_rate=0.02), task_id, seed)
            finally:
                await env.close()

        solo.append(run_async(one()))
    interleaved = sum(
        run_async(_interleaved(target, solo[i], solo[i + 1])) for i in range(0, len(solo) - 1, 2)
    )
    metrics = {"dirty_resets": resets, "interleaved_steps": interleaved}
    return (
        f"{resets} resets after dirty episodes match fresh instances; {interleaved} "
        "interleaved steps match solo runs",
        metrics,
    )
