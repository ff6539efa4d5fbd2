"""The ``gymforge`` command line. Machine-readable output goes to stdout alone; logs,
progress and tables go to stderr. User mistakes print one line, never a traceback."""

from __future__ import annotations

import sys

from gymforge.cli import evaluation, grade, logs, qa, reproduce, run, sandbox, serve  # noqa: F401
from gymforge.cli import judge as _judge  # noqa: F401  (registers `gymforge judge`)
from gymforge.cli.common import app, err

__all__ = ["app", "main"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
