"""Opening an environment by name for a run: one resolution, datasets loaded once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.registry.resolve import make_env
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.source import TaskSource


def task_source(env: Any) -> TaskSource | None:
    """The environment's ``TaskSource``, if it exposes one."""
    tasks = getattr(env, "tasks", None)
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


def open_env(name: str, dataset: Path | None = None) -> EnvHandle:
    """Resolve ``name`` once; load ``dataset`` once (hash-pinned) and serve it on every
    instance the factory makes."""
    probe = make_env(name)
    try:
        preflight = getattr(probe, "preflight", None)
        if callable(preflight):  # what the env's verifier needs must work, before any episode
            preflight()
        datasets = []
        if dataset is not None:
            load = getattr(probe, "load_dataset", None)
            if load is None:
                raise UserError(f"the {probe.spec.id} environment does not take datasets")
            datasets.append(load(dataset))
    finally:
        asyncio.run(probe.close())

    def factory() -> Environment:
        env = make_env(name)
        for ds in datasets:
            env.use_dataset(ds)  # type: ignore[attr-defined]
        return env

    sample = factory()
    tasks = task_source(sample)
    asyncio.run(sample.close())
    return EnvHandle(name, factory, tasks, datasets)
