"""The ``gymforge`` command line. Machine-readable output goes to stdout alone; logs,
progress and tables go to stderr. User mistakes (gymforge's own errors) print one line, never
a traceback; any other exception is a bug and shows its traceback."""

from __future__ import annotations

import inspect
import sys

import typer

from gymforge.cli import (  # noqa: F401  (each module registers its commands)
    calibration,
    evaluation,
    grade,
    hacks,
    logs,
    pack,
    qa,
    reproduce,
    run,
    sandbox,
    serve,
)
from gymforge.cli import llm_judge as _llm_judge  # noqa: F401  (registers `gymforge judge`)
from gymforge.cli import proxy as _proxy  # noqa: F401  (registers `gymforge proxy`)
from gymforge.cli import tasks as _tasks  # noqa: F401  (registers `gymforge tasks`)
from gymforge.cli import view as _view  # noqa: F401  (registers `gymforge view`)
from gymforge.cli.common import app, err, visible_logs
from gymforge.cli.sandbox_flags import close_command_services
from gymforge.cli.stops import exit_code, install, stopped_by
from gymforge.version import __version__

__all__ = ["app", "main"]


def _print_version(value: bool) -> None:
    if value:
        print(f"gymforge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print gymforge's version and exit.",
    ),
) -> None:
    """gymforge: seeded, verifiable, QA-checked RL environments for LLMs."""
    ctx.call_on_close(close_command_services)  # the command's services end with it


def _one_paragraph(doc: str | None) -> str | None:
    """A docstring's first paragraph on one line: typer's command list keeps a docstring's
    line breaks, which cut its one-line summaries mid-sentence."""
    if not doc:
        return None
    first = inspect.cleandoc(doc).split("\n\n")[0]
    return " ".join(line.strip() for line in first.splitlines())


def tidy_help(cli: typer.Typer) -> None:
    """Give every command (and sub-command) without a ``short_help`` its docstring's first
    paragraph as one line."""
    for command in cli.registered_commands:
        if command.short_help is None and command.callback is not None:
            command.short_help = _one_paragraph(command.help or command.callback.__doc__)
    for group in cli.registered_groups:
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)


tidy_help(app)


def main() -> None:
    install()  # SIGTERM and SIGHUP stop a command like Ctrl-C
    visible_logs()  # a warning quoting a server (or the agent through it) cannot steer the terminal
    try:
        app()
    except KeyboardInterrupt:
        by = stopped_by()
        err.print("interrupted" + ("" if by == "SIGINT" else f" by {by}"))
        sys.exit(exit_code())
