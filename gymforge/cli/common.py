"""Shared CLI plumbing: the typer app, the stderr console, and one-line errors."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from gymforge.core.errors import GymforgeError, IntegrityError
from gymforge.envs.handle import EnvHandle, task_source
from gymforge.envs.handle import open_env as _open_env

__all__ = [
    "EnvHandle",
    "app",
    "err",
    "fail",
    "friendly",
    "open_env",
    "progress_bar",
    "task_source",
]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="gymforge: seeded, verifiable, QA-checked RL environments for LLMs.",
)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)


def open_env(name: str, dataset: Path | None = None) -> EnvHandle:
    """``envs.handle.open_env``, saying on stderr, one line each, which dataset rows did not
    load (the environment serves the others)."""
    handle = _open_env(name, dataset)
    for ds in handle.datasets:
        for problem in ds.errors:
            err.print(f"dataset: {problem}", style="yellow", markup=False, soft_wrap=True)
    return handle


def fail(message: str, code: int = 2) -> None:
    err.print(Text.assemble(("error:", "bold red"), " ", message), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


INFRA_EXIT = 3
"""The exit code of ``run``, ``eval`` and ``calibrate`` when infrastructure failures left
episodes unwritten (after everything else was written and printed)."""


def fail_if_incomplete(summary: dict[str, Any], total: int | None, results: str) -> None:
    """Exit ``INFRA_EXIT`` when the runner summary says episodes were not written."""
    missing = summary.get("infra_errors") or 0
    if missing:
        stopped = summary.get("infra_stopped")
        why = f"; the run stopped early: {stopped}" if stopped else ""
        fail(
            f"{missing}{f' of {total}' if total else ''} episodes were not written: "
            "infrastructure failures "
            f"(see the log above){why}. They were not scored, so {results}. The finished "
            "episodes are kept: run the same command with --resume to run the missing ones.",
            INFRA_EXIT,
        )


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


@contextmanager
def progress_bar(label: str, total: int, quiet: bool) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A stderr progress bar with success rate, mean reward and tokens per second; yields the
    runner's ``on_episode`` callback."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "success {task.fields[rate]:.0%}  reward {task.fields[reward]:+.3f}  "
            "{task.fields[tps]:,.0f} tok/s"
        ),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
    ) as progress:
        bar = progress.add_task(label, total=total, rate=0.0, reward=0.0, tps=0.0)
        seen = {"n": 0, "wins": 0, "reward": 0.0, "tokens": 0}
        start = time.perf_counter()

        def tick(episode: dict[str, Any]) -> None:
            seen["n"] += 1
            seen["wins"] += episode["success"]
            seen["reward"] += episode["reward"]
            seen["tokens"] += episode.get("tokens", 0)
            n = seen["n"]
            tps = seen["tokens"] / max(time.perf_counter() - start, 1e-9)
            progress.update(
                bar, advance=1, rate=seen["wins"] / n, reward=seen["reward"] / n, tps=tps
            )

        yield tick
