"""Shared CLI plumbing: the typer app, the stderr console, and one-line errors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from gymforge.core.errors import GymforgeError, IntegrityError
from gymforge.envs.handle import EnvHandle, open_env, task_source

__all__ = ["EnvHandle", "app", "err", "fail", "friendly", "open_env", "task_source"]

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
