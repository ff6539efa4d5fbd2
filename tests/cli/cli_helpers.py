"""Running the CLI in-process and reading what it said."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

import gymforge
from gymforge.cli import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")
HERE = Path(__file__).resolve().parent
SOURCE = Path(gymforge.__file__).resolve().parents[1]
"""The checkout whose gymforge these tests import (a subprocess must run the same one)."""


def policy(factory: str) -> str:
    """``--policy`` naming a factory of ``slow_policy.py``."""
    return f"{HERE / 'slow_policy.py'}:{factory}"


@dataclass
class Out:
    code: int
    stdout: str
    stderr: str


def cli(*args: str | Path) -> Out:
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, [str(a) for a in args])
    return Out(result.exit_code, result.stdout, ANSI.sub("", result.stderr))


def one_error_line(out: Out, code: int = 2) -> str:
    """The one ``error:`` line of a command that exited ``code`` without a traceback."""
    assert out.code == code, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, out.stderr
    return lines[0]
