"""Helpers of the evaluation tests: the CLI run in-process with its streams apart."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from gymforge.cli import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SKILL = "skilled:1=0.9,2=0.6,3=0.2"
EVAL_ARGS = (
    "eval",
    "ledger",
    "--policy",
    SKILL,
    "--split",
    "all",
    "-n",
    "8",
    "-k",
    "2",
    "--samples",
    "4",
    "--seed",
    "1",
    "--out",
)
"""The shared eval run (the session fixture and the resume test): its output dir follows."""


@dataclass
class Out:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str | Path) -> Out:
    result = CliRunner(env={"NO_COLOR": "1"}).invoke(app, [str(a) for a in args])
    return Out(result.exit_code, result.stdout, ANSI.sub("", result.stderr))


CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
"""Debian's chromium (scripts/setup.sh installs it), or None."""


def chromium_args(profile: Path) -> list[str]:
    """Headless chromium that reaches nothing outside (the flags NOTES.md measured), with a
    fresh profile directory."""
    assert CHROMIUM is not None
    return [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]
