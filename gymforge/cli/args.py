"""Arguments several commands share, declared and checked once: ``--port`` (every server:
``serve``, ``proxy``, ``view``) is checked where it is bound (``gymforge.serve.binding``), so
a bad, busy or forbidden port is the same one ``error:`` line for each; every ``--out``
(file or directory), ``--outdir`` and ``--report`` is checked before anything is written, by
the one check that ``run``, ``eval`` and ``calibrate`` apply to theirs
(``rollout.rundir.check_out``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from gymforge.rollout.rundir import check_out


def port_option(default: int, *names: str, help: str = "0 picks a free port.") -> Any:
    """``--port``: any integer here; ``serve.binding`` refuses one outside 0-65535, busy or
    not allowed, in one line (a typer range check would print a usage box instead)."""
    return typer.Option(default, "--port", *names, help=help)


def out_file(path: Path, flag: str = "--out") -> Path:
    """``path`` checked as a file a command is about to write (``rundir.check_out``)."""
    return check_out(path, flag=flag, directory=False)


def out_dir(path: Path, flag: str = "--out") -> Path:
    """``path`` checked as a directory a command is about to write (``rundir.check_out``)."""
    return check_out(path, flag=flag)
