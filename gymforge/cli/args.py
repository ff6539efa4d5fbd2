"""Arguments several commands share, declared and checked once: ``--port`` (every server:
``serve``, ``proxy``, ``view``) is checked where it is bound (``gymforge.serve.binding``), so
a bad, busy or forbidden port is the same one ``error:`` line for each; ``--out`` files are
checked before anything is written (``out_file``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from gymforge.core.errors import UserError


def port_option(default: int, *names: str, help: str = "0 picks a free port.") -> Any:
    """``--port``: any integer here; ``serve.binding`` refuses one outside 0-65535, busy or
    not allowed, in one line (a typer range check would print a usage box instead)."""
    return typer.Option(default, "--port", *names, help=help)


def out_file(path: Path, flag: str = "--out") -> Path:
    """``path`` checked as a file a command is about to write: not a directory, and its
    parent a directory (or creatable); a ``UserError`` naming ``flag`` otherwise. Nothing is
    created here."""
    if path.is_dir():
        raise UserError(f"{flag} {path} is a directory: give a file name")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{flag} {path}: {parent} is a file, not a directory")
            break
    return path
