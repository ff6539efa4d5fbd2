"""Helpers of the daily-workflow tests: the CLI in-process, and small real datasets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from gymforge.cli import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Out:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]


def cli(*args: str | Path) -> Out:
    result = CliRunner(env={"FORCE_COLOR": None, "NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        app, [str(a) for a in args]
    )
    return Out(result.exit_code, ANSI.sub("", result.stdout), ANSI.sub("", result.stderr))


def math_rows(n: int, split: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """``n`` arithmetic rows with distinct gold answers; ``split`` sets some rows' split."""
    rows: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {"question": f"What is {i + 2} times {i + 3}?"}
        row["answer"] = str((i + 2) * (i + 3))
        if split and i in split:
            row["split"] = split[i]
        rows.append(row)
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def episodes(run_dir: Path) -> list[dict[str, Any]]:
    """The closing record of every episode in ``run_dir``'s trajectory file, in file order."""
    out = []
    for line in (run_dir / "trajectories.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("record") == "episode":
            out.append(rec)
    return out
