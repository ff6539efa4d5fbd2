"""Execute a ``RunSpec``: open the environment, draw the tasks, resolve the policy, run, and
write the trajectories, summary and manifest. The CLI's ``run``, ``eval``, ``calibrate``
and ``reproduce`` use it.

Tasks: with a dataset, every row once in file order (``n=None``) or ``n`` distinct rows
drawn without replacement; otherwise ``n`` tasks sampled from the environment's families.
Each task gets ``group`` rollouts per epoch, and epoch ``e`` plays rollouts
``e*group .. e*group+group-1``, so every episode of a multi-epoch run has its own
``(task_id, seed, rollout)`` key and resume and de-duplication still work.

Interrupted (Ctrl-C), a run still writes ``summary.json`` over the episodes that finished
and raises ``RunInterrupted`` carrying it; ``--resume`` continues from there.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.errors import GymforgeError, UserError
from gymforge.registry.handle import EnvHandle, open_env
from gymforge.rollout.manifest import Command, RunSpec, build_manifest, write_manifest
from gymforge.rollout.resolve import PolicySource, resolve_policy
from gymforge.rollout.rundir import prepare_out
from gymforge.rollout.runner import Job, RunResult, prepare_output, run
from gymforge.rollout.summary import summarize


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``summary`` (also in ``out/summary.json``) covers the episodes
    that finished before it."""

    def __init__(self, out: Path | None, summary: dict[str, Any]) -> None:
        super().__init__("interrupted")
        self.out = out
        self.summary = summary


def epoch_jobs(task_ids: Sequence[str], seed: int, group: int, epochs: int = 1) -> list[Job]:
    """``group`` rollouts of every task per epoch; epoch ``e`` plays rollouts
    ``e*group .. e*group+group-1``. Jobs are ordered epoch by epoch, in task order."""
    if group < 1 or epochs < 1:
        raise ValueError("group and epochs must be >= 1")
    per_epoch = len(task_ids) * group
    return [
        Job(e * per_epoch + i * group + r, task_id, seed, e * group + r)
        for e in range(epochs)
        for i, task_id in enumerate(task_ids)
        for r in range(group)
    ]


def draw_tasks(handle: EnvHandle, spec: RunSpec) -> list[str]:
    """The task ids ``spec`` runs (see the module docstring)."""
    if handle.tasks is None:
        raise GymforgeError(f"{spec.env} exposes no task source to sample from")
    if handle.datasets:
        names = [d.name for d in handle.datasets]
        return handle.tasks.dataset_rows(spec.split, names, spec.n, spec.seed)
    if spec.n is None:
        raise UserError("-n is needed unless a --dataset gives the tasks")
    return handle.tasks.sample(spec.n, spec.seed, spec.split)


def policy_checkpoint(source: PolicySource) -> str | None:
    """The checkpoint the policy stamps on its records, for the manifest (None if making a
    policy to ask fails)."""
    known = getattr(source.factory, "checkpoint", None)
    if isinstance(known, str):
        return known
    try:
        made = source.factory().checkpoint
    except Exception:  # a policy that cannot be made here fails in the run, not the manifest
        return None
    return made if isinstance(made, str) else None


@dataclass
class Prepared:
    """A run ready to start: its environment, tasks and policy; ``out`` checked and its
    manifest written."""

    handle: EnvHandle
    task_ids: list[str]
    source: PolicySource


def prepare(
    spec: RunSpec,
    out: Path | None,
    *,
    task_ids: list[str] | None = None,
    policy: PolicySource | None = None,
    resume: bool = False,
    policy_options: dict[str, Any] | None = None,
    handle: EnvHandle | None = None,
    guard: bool = False,
    overwrite: bool = False,
    command: Command = "run",
    config: dict[str, Any] | None = None,
) -> Prepared:
    """Everything ``execute`` does before the first episode (see there); the CLI calls it
    first so that a refused ``--out`` is refused before any progress output."""
    handle = handle or open_env(spec.env, Path(spec.dataset) if spec.dataset else None)
    if task_ids is None:
        task_ids = draw_tasks(handle, spec)
    probe = handle.factory()
    env_spec = probe.spec
    asyncio.run(probe.close())
    source = policy or resolve_policy(spec.policy, **(policy_options or {}))
    if out is not None:
        manifest = build_manifest(
            spec,
            env_spec,
            task_ids,
            handle.manifests,
            command=command,
            config=config,
            policy_checkpoint=policy_checkpoint(source),
        )
        if guard:
            prepare_out(out, manifest, resume=resume, overwrite=overwrite)
        write_manifest(out, manifest)
    return Prepared(handle, task_ids, source)


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
    guard: bool = False,
    overwrite: bool = False,
    command: Command = "run",
    config: dict[str, Any] | None = None,
    prepared: Prepared | None = None,
    seal_key: bytes | None = None,
) -> RunResult:
    """Run ``spec``. ``task_ids`` overrides the draw (reproduction uses the recorded ones);
    ``handle`` reuses an environment already opened for ``spec``. ``spec.backend`` picks
    where episodes run: ``local`` (this process), ``redis`` (workers reading a Redis stream
    at ``backend_url``) or ``ray`` (actors; ``backend_url`` is the cluster address, if any).
    Remote backends resolve the environment and policy from their names on each worker.

    ``guard`` (the CLI's setting) checks ``out`` first with ``rundir.prepare_out``: a
    previous run there is continued only when ``resume`` is set and the manifests agree, and
    deleted first when ``overwrite`` is. ``command`` and ``config`` go into the manifest.
    ``prepared`` (from ``prepare``) skips all of that. ``seal_key`` (default
    ``$GYMFORGE_SEAL_KEY``) seals the trajectories."""
    if prepared is None:
        prepared = prepare(
            spec,
            out,
            task_ids=task_ids,
            policy=policy,
            resume=resume,
            policy_options=policy_options,
            handle=handle,
            guard=guard,
            overwrite=overwrite,
            command=command,
            config=config,
        )
    handle, task_ids, source = prepared.handle, prepared.task_ids, prepared.source
    summary_extra = {
        "env": spec.env,
        "policy": spec.policy,
        "seed": spec.seed,
        "split": spec.split,
        "group": spec.group,
        "epochs": spec.epochs,
        "datasets": handle.manifests,
        "backend": spec.backend,
    }
    jobs = epoch_jobs(task_ids, spec.seed, spec.group, spec.epochs)
    try:
        if spec.backend != "local":
            return _remote(
                spec,
                out,
                jobs,
                resume,
                on_episode,
                policy_options or {},
                backend_url,
                summary_extra,
                seal_key,
            )
        return asyncio.run(
            _local(spec, handle, source, jobs, out, resume, on_episode, summary_extra, seal_key)
        )
    except KeyboardInterrupt:
        summary = _interrupted_summary(out, summary_extra, seal_key)
        raise RunInterrupted(out, summary) from None


async def _local(
    spec: RunSpec,
    handle: EnvHandle,
    source: PolicySource,
    jobs: list[Job],
    out: Path | None,
    resume: bool,
    on_episode: Callable[[dict[str, Any]], None] | None,
    summary_extra: dict[str, Any],
    seal_key: bytes | None,
) -> RunResult:
    try:
        return await run(
            handle.factory,
            source.factory,
            jobs,
            out,
            concurrency=spec.concurrency,
            resume=resume,
            episode_timeout_s=spec.episode_timeout,
            max_retries=spec.max_retries,
            on_episode=on_episode,
            summary_extra=summary_extra,
            seal_key=seal_key,
        )
    finally:
        if source.close is not None:
            await source.close()


def _interrupted_summary(
    out: Path | None, summary_extra: dict[str, Any], seal_key: bytes | None
) -> dict[str, Any]:
    """The summary of the episodes a stopped run wrote (the file's torn tail, if any, is cut
    off, and its seals checked, as ``--resume`` would), written to ``out/summary.json``."""
    path = out / "trajectories.jsonl" if out is not None else None
    episodes = prepare_output(path, True, seal_key).previous
    summary = summarize(episodes, **summary_extra)
    summary["interrupted"] = True
    if out is not None:
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _remote(
    spec: RunSpec,
    out: Path | None,
    jobs: list[Job],
    resume: bool,
    on_episode: Callable[[dict[str, Any]], None] | None,
    policy_options: dict[str, Any],
    url: str | None,
    summary_extra: dict[str, Any],
    seal_key: bytes | None,
) -> RunResult:
    common: dict[str, Any] = {
        "resume": resume,
        "on_episode": on_episode,
        "summary_extra": summary_extra,
        "max_retries": spec.max_retries,
        "seal_key": seal_key,
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
                policy_options={k: v for k, v in policy_options.items() if k != "base_url"},
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
