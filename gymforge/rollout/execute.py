"""Execute a ``RunSpec``: open the environment, draw the tasks, resolve the policy, run, and
write the trajectories, summary and manifest. The CLI's ``run`` and ``reproduce`` use it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymforge.core.errors import GymforgeError
from gymforge.envs.handle import EnvHandle, open_env
from gymforge.rollout.manifest import RunSpec, build_manifest, write_manifest
from gymforge.rollout.resolve import PolicySource, resolve_policy
from gymforge.rollout.runner import RunResult, run


def execute(
    spec: RunSpec,
    out: Path | None,
    *,
    task_ids: list[str] | None = None,
    policy: PolicySource | None = None,
    resume: bool = False,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    policy_options: dict[str, Any] | None = None,
    handle: EnvHandle | None = None,
) -> RunResult:
    """Run ``spec``. ``task_ids`` overrides sampling (reproduction uses the recorded ones);
    ``handle`` reuses an environment already opened for ``spec``."""
    handle = handle or open_env(spec.env, Path(spec.dataset) if spec.dataset else None)
    if handle.tasks is None:
        raise GymforgeError(f"{spec.env} exposes no task source to sample from")
    if task_ids is None:
        only = [d.name for d in handle.datasets] or None  # --dataset: run the dataset's tasks
        task_ids = handle.tasks.sample(spec.n, spec.seed, spec.split, families=only)
    source = policy or resolve_policy(spec.policy, **(policy_options or {}))
    probe = handle.factory()
    env_spec = probe.spec
    asyncio.run(probe.close())
    if out is not None:
        write_manifest(out, build_manifest(spec, env_spec, task_ids, handle.manifests))

    async def go() -> RunResult:
        try:
            return await run(
                handle.factory,
                source.factory,
                [(t, spec.seed) for t in task_ids],
                out,
                concurrency=spec.concurrency,
                group=spec.group,
                resume=resume,
                episode_timeout_s=spec.episode_timeout,
                max_retries=spec.max_retries,
                on_episode=on_episode,
                summary_extra={
                    "env": spec.env,
                    "policy": spec.policy,
                    "seed": spec.seed,
                    "split": spec.split,
                    "group": spec.group,
                    "datasets": handle.manifests,
                },
            )
        finally:
            if source.close is not None:
                await source.close()

    return asyncio.run(go())
