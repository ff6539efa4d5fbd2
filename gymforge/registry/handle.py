"""Opening an environment by name for a run: one resolution, datasets loaded once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.capabilities import (
    DATASETS,
    PREFLIGHT,
    TASKS,
    TakesDatasets,
    supported,
)
from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.registry.resolve import make_env
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.source import TaskSource


def task_source(env: object) -> TaskSource | None:
    """The environment's ``TaskSource``, if it exposes one."""
    found = supported(env, TASKS)
    tasks = found.tasks if found is not None else None
    return tasks if isinstance(tasks, TaskSource) else None


@dataclass
class EnvHandle:
    """How a run makes instances of one environment, with its datasets applied."""

    name: str
    factory: Callable[[], Environment]
    tasks: TaskSource | None
    datasets: list[Dataset]

    @property
    def manifests(self) -> list[dict[str, Any]]:
        return [d.manifest() for d in self.datasets]


def open_env(name: str, dataset: Path | None = None, *, token: str | None = None) -> EnvHandle:
    """Resolve ``name`` once; load ``dataset`` once (hash-pinned) and serve it on every
    instance the factory makes. ``token``: a ``ws://`` server's bearer token."""
    probe = make_env(name, token=token)
    try:
        checked = supported(probe, PREFLIGHT)
        if checked is not None:  # what the env's verifier needs must work, before any episode
            checked.preflight()
        datasets: list[Dataset] = []
        if dataset is not None:
            datasets.append(_takes_datasets(probe).load_dataset(dataset))
    finally:
        asyncio.run(probe.close())

    def factory() -> Environment:
        env = make_env(name, token=token)
        for ds in datasets:
            _takes_datasets(env).use_dataset(ds)
        return env

    sample = factory()
    tasks = task_source(sample)
    asyncio.run(sample.close())
    return EnvHandle(name, factory, tasks, datasets)


def _takes_datasets(env: Environment) -> TakesDatasets[Dataset]:
    found: TakesDatasets[Dataset] | None = supported(env, DATASETS)
    if found is None:
        raise UserError(f"the {env.spec.id} environment does not take datasets")
    return found
