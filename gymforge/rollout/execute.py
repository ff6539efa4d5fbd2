"""Execute a ``RunSpec``: open the environment, draw the tasks, resolve the policy, run, and
write the trajectories, summary and manifest. The CLI's ``run`` and ``reproduce`` use it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymforge.core.errors import GymforgeError, UserError
from gymforge.envs.handle import EnvHandle, open_env
from gymforge.rollout.manifest import RunSpec, build_manifest, write_manifest
from gymforge.rollout.resolve import PolicySource, resolve_policy
from gymforge.rollout.runner import RunResult, expand, run


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
    backend_url: str | None = None,
) -> RunResult:
    """Run ``spec``. ``task_ids`` overrides sampling (reproduction uses the recorded ones);
    ``handle`` reuses an environment already opened for ``spec``. ``spec.backend`` picks
    where episodes run: ``local`` (this process), ``redis`` (workers reading a Redis stream
    at ``backend_url``) or ``ray`` (actors; ``backend_url`` is the cluster address, if any).
    Remote backends resolve the environment and policy from their names on each worker."""
    handle = handle or open_env(spec.env, Path(spec.dataset) if spec.dataset else None)
    if handle.tasks is None:
        raise GymforgeError(f"{spec.env} exposes no task source to sample from")
    if task_ids is None:
        only = [d.name for d in handle.datasets] or None  # --dataset: run the dataset's tasks
        task_ids = handle.tasks.sample(spec.n, spec.seed, spec.split, families=only)
    probe = handle.factory()
    env_spec = probe.spec
    asyncio.run(probe.close())
    if out is not None:
        write_manifest(out, build_manifest(spec, env_spec, task_ids, handle.manifests))

    summary_extra = {
        "env": spec.env,
        "policy": spec.policy,
        "seed": spec.seed,
        "split": spec.split,
        "group": spec.group,
        "datasets": handle.manifests,
        "backend": spec.backend,
    }
    if spec.backend != "local":
        return _remote(
            spec,
            out,
            task_ids,
            resume,
            on_episode,
            policy_options or {},
            backend_url,
            summary_extra,
        )

    source = policy or resolve_policy(spec.policy, **(policy_options or {}))

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
                summary_extra=summary_extra,
            )
        finally:
            if source.close is not None:
                await source.close()

    return asyncio.run(go())


def _remote(
    spec: RunSpec,
    out: Path | None,
    task_ids: list[str],
    resume: bool,
    on_episode: Callable[[dict[str, Any]], None] | None,
    policy_options: dict[str, Any],
    url: str | None,
    summary_extra: dict[str, Any],
) -> RunResult:
    jobs = expand([(t, spec.seed) for t in task_ids], spec.group)
    common: dict[str, Any] = {
        "resume": resume,
        "on_episode": on_episode,
        "summary_extra": summary_extra,
        "max_retries": spec.max_retries,
    }
    if spec.backend == "redis":
        from gymforge.rollout.backends.redis_streams import run_redis

        if not url:
            raise UserError("--backend redis needs --redis URL")
        return asyncio.run(
            run_redis(
                url,
                spec.env,
                spec.policy,
                jobs,
                out,
                dataset=spec.dataset,
                base_url=policy_options.get("base_url"),
                episode_timeout_s=spec.episode_timeout,
                **common,
            )
        )
    try:
        from gymforge.rollout.backends.ray_actors import run_ray
    except ImportError as err:
        raise UserError(f"--backend ray is unavailable: {err}") from err
    return asyncio.run(
        run_ray(
            spec.env,
            spec.policy,
            jobs,
            out,
            address=url,
            max_concurrency=spec.concurrency,
            dataset=spec.dataset,
            base_url=policy_options.get("base_url"),
            policy_options={k: v for k, v in policy_options.items() if k != "base_url"},
            episode_timeout_s=spec.episode_timeout,
            **common,
        )
    )
