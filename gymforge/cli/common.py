"""Shared CLI plumbing: the typer app, the stderr console, and one-line errors."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from gymforge.core.env import Environment
from gymforge.core.errors import GymforgeError, IntegrityError, UserError
from gymforge.envs.registry import make_env
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.source import TaskSource

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="gymforge: seeded, verifiable, QA-checked RL environments for LLMs.",
)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)


def fail(message: str, code: int = 2) -> None:
    err.print(Text.assemble(("error:", "bold red"), " ", message), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn gymforge errors and bad files into one readable line and exit code 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except IntegrityError as e:
            fail(f"integrity check failed: {e}", 1)
        except (GymforgeError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
            fail(str(e))
        except ValueError as e:
            fail(str(e))

    return wrapper


def task_source(env: Any) -> TaskSource | None:
    tasks = getattr(env, "tasks", None)
    return tasks if isinstance(tasks, TaskSource) else None


@dataclass
class EnvHandle:
    """How the CLI makes instances of one environment, with its datasets applied."""

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
