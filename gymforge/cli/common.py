"""Shared CLI plumbing: the typer app, the stderr console, one-line errors, and the options
every command that writes a run shares (``--resume``, ``--overwrite``, ``-n`` over a
dataset)."""

from __future__ import annotations

import logging
import shlex
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from gymforge.cli import stops
from gymforge.cli.progress import EpisodeProgress
from gymforge.cli.progress import progress_bar as _progress_bar
from gymforge.core.errors import GymforgeError
from gymforge.registry.handle import EnvHandle, task_source
from gymforge.registry.handle import open_env as _open_env
from gymforge.rollout import failures
from gymforge.rollout.runner import RunInterrupted
from gymforge.tools.tool import ToolDocWarning
from gymforge.verify.services import active
from gymforge.wording import plural, times, visible, visible_message

__all__ = [
    "EnvHandle",
    "app",
    "dataset_note",
    "err",
    "fail",
    "friendly",
    "one_of",
    "open_env",
    "overwrite_option",
    "progress_bar",
    "resume_command",
    "resume_option",
    "task_source",
]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="gymforge: seeded, verifiable, QA-checked RL environments for LLMs.",
)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)


def open_env(name: str, dataset: Path | None = None) -> EnvHandle:
    """``envs.handle.open_env``, saying on stderr, one line each, how a dataset was read
    (its shape, for environments that read several) and which rows did not load (the
    environment serves the others)."""
    found = active()  # the command's services (``cli.sandbox_flags.use_settings``)
    handle = _open_env(name, dataset, token=found.settings.token if found is not None else None)
    for ds in handle.datasets:
        if ds.shape is not None:
            err.print(f"dataset: {ds.pin}: {ds.shape.note}", markup=False, soft_wrap=True)
        for problem in ds.errors:
            err.print(f"dataset: {problem}", style="yellow", markup=False, soft_wrap=True)
    return handle


def resume_option(what: str = "episodes") -> Any:
    """``--resume``: continue the run in OUT (refused if this invocation differs from it)."""
    return typer.Option(
        False,
        "--resume",
        help=f"Keep OUT's finished {what} and run the rest; refused if the run in OUT was "
        "made with other settings (environment, policy, seed, tasks, ...).",
    )


def overwrite_option() -> Any:
    """``--overwrite``: delete the run files in OUT first."""
    return typer.Option(
        False, "--overwrite", help="Delete the run already in OUT (its files only) first."
    )


def dataset_note_text(
    pins: str, n: int | None, count: int, split: str, epochs: int = 1, group: int = 1
) -> str:
    """How a dataset's rows are used, in words: all of the split's rows in file order, or a
    sample; each row's rollouts and passes counted (``--group``, ``--epochs``)."""
    rows = "row" if split == "all" else f"{split} row"
    each = "" if group == 1 else f", {plural(group, 'rollout')} each"
    if n is None:
        return (
            f"running every {rows} of {pins} {times(epochs)}, in file order "
            f"({plural(count, 'row')}{each})"
        )
    return (
        f"sampling {plural(count, rows)} of {pins} without replacement (by --seed{each}); "
        "omit -n to run every row"
    )


def dataset_note(
    handle: EnvHandle, n: int | None, count: int, split: str, epochs: int = 1, group: int = 1
) -> None:
    """Say how a dataset's rows are used (``dataset_note_text``), on stderr."""
    if not handle.datasets:
        return
    pins = ", ".join(d.pin for d in handle.datasets)
    err.print(dataset_note_text(pins, n, count, split, epochs, group), highlight=False)


def resume_command(argv: list[str] | None = None) -> str:
    """The command line that continues an interrupted one: the same arguments with
    ``--resume`` (and without ``--overwrite``)."""
    args = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--overwrite"]
    if "--resume" not in args:
        args.append("--resume")
    return "gymforge " + shlex.join(args)


@contextmanager
def author_warnings() -> Iterator[None]:
    """Show an environment author's warnings (``ToolDocWarning``) as one ``warning:`` line
    each, every time, instead of Python's two-line form pointing into gymforge."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", ToolDocWarning)
        shown = warnings.showwarning

        def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if issubclass(category, ToolDocWarning):
                err.print(Text.assemble(("warning:", "yellow"), " ", str(message)), soft_wrap=True)
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        yield


_Choice = TypeVar("_Choice", bound=str)


def one_of(flag: str, value: str, choices: tuple[_Choice, ...]) -> _Choice:
    """``value`` as the one of ``choices`` it equals; a one-line error naming them if none."""
    for choice in choices:
        if value == choice:
            return choice
    names = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    raise GymforgeError(f"{flag} must be {names}, not {value!r}")


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` (its control characters as escapes, its few lines indented
    under the first: it may quote a file, a server or an agent, ``wording.visible_message``)
    and exit with ``code``."""
    shown = visible_message(message)
    err.print(Text.assemble(("error:", "bold red"), " ", shown), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


class _VisibleFormatter(logging.Formatter):
    """A warning's message on one line; a traceback's lines kept, each shown literally."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return visible(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return visible(super().formatException(ei), lines=True)

    def formatStack(self, stack_info: str) -> str:
        return visible(super().formatStack(stack_info), lines=True)


def visible_logs() -> None:
    """Print gymforge's log warnings as Python's last-resort handler would (the message
    alone, to stderr), with control characters as escapes (``wording.visible``): a warning
    may quote a server's error body, which may echo the agent's text. Nothing changes when
    logging is configured already (a handler on the root or the ``gymforge`` logger)."""
    logger = logging.getLogger("gymforge")
    if logger.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_VisibleFormatter())
    logger.addHandler(handler)


SEAL_KEY_HELP = "Seal key file (its exact bytes); default: $GYMFORGE_SEAL_KEY."

INFRA_EXIT = failures.INFRA_EXIT
"""The exit code of ``run``, ``eval`` and ``calibrate`` when infrastructure failures left
episodes unwritten (after everything else was written and printed): the rule is
``gymforge.rollout.failures``'s."""
RESUMABLE = ("run", "eval", "calibrate")
"""The commands that take ``--resume``."""


def fail_if_incomplete(summary: dict[str, Any], total: int | None, results: str) -> None:
    """Exit ``INFRA_EXIT`` when the runner summary says episodes were not written."""
    missing = summary.get("infra_errors") or 0
    if missing:
        stopped = summary.get("infra_stopped")
        why = f"; the run stopped early: {stopped}" if stopped else ""
        fail(
            f"{missing} of {plural(total, 'episode') if total else 'the episodes'} "
            f"{'was' if missing == 1 else 'were'} not written: "
            "infrastructure failures "
            f"(see the log above){why}. They were not scored, so {results}. The finished "
            "episodes are kept: run the same command with --resume to run the missing ones.",
            INFRA_EXIT,
        )


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Apply the one rule for failures (``gymforge.rollout.failures``) to a command: a
    mistake (``GymforgeError``: a bad id, file, line or option; a path that cannot be opened)
    is one readable line and exit code 2, a failed integrity check exit 1, a transient
    failure that ended the run (``ExecutorDown``) exit 3 with the resume command. Anything
    else is a bug and keeps its traceback: a ``ValueError`` is not a user error until the
    code that read the input says so (a ``ConfigError``)."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with author_warnings():
                return fn(*args, **kwargs)
        except RunInterrupted as stop:
            interrupted(stop)
        except (GymforgeError, OSError) as e:
            kind = failures.kind_of(e)
            if kind == "bug":
                raise
            if kind == "integrity":
                fail(f"integrity check failed: {e}", failures.INTEGRITY_EXIT)
            if kind == "transient":
                fail(f"{e}; {_resume_advice()}", failures.INFRA_EXIT)
            fail(str(failures.as_mistake(e)), failures.USER_EXIT)

    return wrapper


def _resume_advice() -> str:
    if len(sys.argv) > 1 and sys.argv[1] in RESUMABLE:
        return f"the finished episodes are kept: continue with {resume_command()}"
    return "run the same command again once it is back"


def interrupted(stop: RunInterrupted) -> None:
    """Ctrl-C, SIGTERM or SIGHUP during a run (``stops``): say what was kept and how to
    continue; exit 128 + the signal number."""
    summary = stop.summary
    done = summary.get("episodes", 0)
    where = f" in {stop.out}" if stop.out is not None else ""
    by = stops.stopped_by()
    rate = summary.get("success_rate")
    figures = (
        f" (success {rate:.1%}, mean reward {summary.get('mean_reward') or 0:.3f})"
        if done and rate is not None
        else ""
    )
    err.print(
        f"interrupted{'' if by == 'SIGINT' else f' by {by}'}: {done} finished episodes are "
        f"kept{where}, with summary.json{figures}",
        highlight=False,
        soft_wrap=True,
    )
    if len(sys.argv) > 1 and sys.argv[1] in RESUMABLE:
        err.print(f"continue with: {resume_command()}", highlight=False, soft_wrap=True)
    raise typer.Exit(stops.exit_code())


@contextmanager
def progress_bar(label: str, total: int, quiet: bool) -> Iterator[EpisodeProgress]:
    """``cli.progress.progress_bar`` on stderr; yields the runner's ``on_episode`` callback
    (its ``resumed`` method is the runner's ``on_resumed``)."""
    with _progress_bar(label, total, quiet, err) as bar:
        yield bar


def serve_until_interrupted(stop: Callable[[], None]) -> None:
    """Block until Ctrl-C (a server running in its own threads), then ``stop`` it."""
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        err.print("stopped")
    finally:
        stop()
