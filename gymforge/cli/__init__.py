"""The ``gymforge`` command line. Machine-readable output goes to stdout alone; logs,
progress and tables go to stderr. User mistakes print one line, never a traceback."""

from __future__ import annotations

import sys

from gymforge.cli import evaluation, grade, logs, qa, reproduce, run, sandbox, serve  # noqa: F401
from gymforge.cli import judge as _judge  # noqa: F401  (registers `gymforge judge`)
from gymforge.cli.common import app, err, resume_command
from gymforge.rollout.execute import RunInterrupted

__all__ = ["app", "main"]


def main() -> None:
    try:
        app()
    except RunInterrupted as stop:
        done = stop.summary.get("episodes", 0)
        where = f" in {stop.out}" if stop.out is not None else ""
        err.print(f"interrupted: {done} finished episodes are kept{where}, with summary.json")
        if len(sys.argv) > 1 and sys.argv[1] in ("run", "eval", "calibrate"):
            err.print(f"continue with: {resume_command()}", highlight=False, soft_wrap=True)
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
