"""Plan a run before its first episode: open the environment, draw the tasks, resolve the
policy, check ``--out`` and write the manifest. The CLI's ``run``, ``eval``, ``calibrate``
and ``reproduce`` call ``prepare`` and then ``runner.run`` with the spec it returns.

Tasks: with a dataset, every row once in file order (``n=None``) or ``n`` distinct rows
drawn without replacement; otherwise ``n`` tasks sampled from the environment's families
(with ``n=None``, an environment that is a fixed task list and no families, such as a
``harbor:`` path, runs every row once).
Each task gets ``group`` rollouts per epoch, and epoch ``e`` plays rollouts
``e*group .. e*group+group-1`` (``jobs.epoch_jobs``), so every episode of a multi-epoch run
has its own ``(task_id, seed, rollout)`` key and resume and de-duplication still work.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.errors import GymforgeError, UserError
from gymforge.registry.handle import EnvHandle, open_env
from gymforge.rollout.manifest import Command, build_manifest, write_manifest
from gymforge.rollout.resolve import (
    PolicySource,
    resolve_policy,
    with_harness_shell,
    with_run_hidden,
)
from gymforge.rollout.rundir import prepare_out
from gymforge.rollout.spec import RunSpec


def draw_tasks(handle: EnvHandle, spec: RunSpec) -> list[str]:
    """The task ids ``spec`` runs (see the module docstring)."""
    if handle.tasks is None:
        raise GymforgeError(f"{spec.env} exposes no task source to sample from")
    if handle.datasets:
        names = [d.name for d in handle.datasets]
        return handle.tasks.dataset_rows(spec.split, names, spec.n, spec.seed)
    if spec.n is None:
        if handle.tasks.datasets and not handle.tasks.families:  # a fixed task list
            return handle.tasks.dataset_rows(spec.split, None, None, spec.seed)
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
    """A run ready to start: ``spec`` with its tasks, dataset hashes and output settings
    filled in, the environment it opened and the policy it resolved."""

    spec: RunSpec
    handle: EnvHandle
    source: PolicySource


def prepare(
    spec: RunSpec,
    *,
    policy: PolicySource | None = None,
    policy_options: dict[str, Any] | None = None,
    handle: EnvHandle | None = None,
    guard: bool = False,
    overwrite: bool = False,
    resumable: bool = True,
    command: Command = "run",
    config: dict[str, Any] | None = None,
) -> Prepared:
    """Everything before the first episode. ``spec.tasks`` overrides the draw (reproduction
    uses the recorded ones); ``handle`` reuses an environment already opened for ``spec``.

    With ``spec.out``, ``guard`` (the CLI's setting) checks it first with
    ``rundir.prepare_out``: a previous run there is continued only when ``spec.resume`` is
    set and the manifests agree (``manifest.resume_mismatches``), and deleted first when
    ``overwrite`` is (``resumable`` False: the command has no ``--resume`` to suggest).
    ``command`` and ``config`` go into the manifest."""
    handle = handle or open_env(spec.env, Path(spec.dataset) if spec.dataset else None)
    task_ids = spec.tasks if spec.tasks is not None else draw_tasks(handle, spec)
    spec = spec.model_copy(update={"tasks": task_ids, "dataset_manifests": handle.manifests})
    probe = handle.factory()
    env_spec = probe.spec
    asyncio.run(probe.close())
    options = with_run_hidden(dict(policy_options or {}), spec.policy, spec.out)
    if policy is None:
        options = with_harness_shell(options, handle.factory)
    source = policy or resolve_policy(spec.policy, **options)
    if spec.out is not None:
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
            prepare_out(
                spec.out, manifest, resume=spec.resume, overwrite=overwrite, resumable=resumable
            )
        write_manifest(spec.out, manifest)
    return Prepared(spec, handle, source)
