"""Exported workbooks carry their formulas' values (issue 36).

Nothing in the CLI wrote the spreadsheet environment's ``.xlsx``, and the file
``export_workbook`` made held formulas with no cached values, so ``pandas.read_excel``
(openpyxl with ``data_only``) read every formula cell as NaN. ``gymforge export RUN
--format xlsx`` now writes each episode's final workbook, formulas with their values.
"""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.cli.workbooks import file_name
from gymforge.envs.spreadsheet import SpreadsheetEnv
from gymforge.envs.spreadsheet.cells import decode, same_value
from gymforge.envs.spreadsheet.workbook import Book
from gymforge.envs.spreadsheet.xlsx import export_workbook
from gymforge.rollout.replay import replay_episode
from gymforge.trajectory.io import EpisodeLog, read_episodes


@dataclass
class Out:
    code: int
    stderr: str


def cli(*args: str | Path) -> Out:
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, [str(a) for a in args])
    return Out(result.exit_code, result.stderr)


def values_as_pandas_reads_them(blob: bytes) -> dict[str, dict[tuple[int, int], object]]:
    """Cell values by sheet, loaded exactly as pandas' openpyxl reader loads a file."""
    wb = load_workbook(io.BytesIO(blob), read_only=True, data_only=True, keep_links=False)
    out: dict[str, dict[tuple[int, int], object]] = {}
    for ws in wb.worksheets:
        cells = out.setdefault(ws.title, {})
        for row in ws.iter_rows():
            for cell in row:
                if getattr(cell, "value", None) is not None:
                    cells[(cell.row, cell.column)] = cell.value
    return out


def formula_cells(book: Book) -> list[dict[str, object]]:
    return list(book.db.all("SELECT * FROM cells WHERE formula IS NOT NULL AND formula != ''"))


async def final_cells(log: EpisodeLog, blob: bytes) -> list[dict[str, object]]:
    """The formula cells of the episode's final workbook, replayed; checks ``blob`` is it."""
    env = SpreadsheetEnv()
    try:
        await replay_episode(env, log)
        assert export_workbook(env.book, env.db.now()) == blob
        return formula_cells(env.book)
    finally:
        await env.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    res = cli("run", "spreadsheet", "-p", "oracle", "-n", "4", "--seed", "2", "--out", out)
    assert res.code == 0, res.stderr
    return out


def test_cli_writes_final_workbooks_whose_formula_values_readers_see(
    run_dir: Path, tmp_path: Path
) -> None:
    res = cli("export", run_dir, "--format", "xlsx", "--out", tmp_path / "books")
    assert res.code == 0, res.stderr
    logs = read_episodes(run_dir / "trajectories.jsonl")
    files = sorted((tmp_path / "books").glob("*.xlsx"))
    assert [f.name for f in files] == sorted(file_name(log.episode_id) for log in logs)
    checked = 0
    for log in logs:
        blob = (tmp_path / "books" / file_name(log.episode_id)).read_bytes()
        seen = values_as_pandas_reads_them(blob)

        for row in asyncio.run(final_cells(log, blob)):
            want = decode(row)
            if want is None:
                continue
            got = seen[str(row["sheet"])].get((int(row["row"]), int(row["col"])))  # type: ignore[call-overload]
            assert got is not None, f"{row['id']} ({row['formula']}) reads as empty"
            assert same_value(got, want), (row["id"], got, want)
            checked += 1
    assert checked > 0


def test_pandas_reads_values_not_nan(run_dir: Path, tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("openpyxl")
    assert cli("export", run_dir, "-f", "xlsx", "-o", tmp_path).code == 0
    for path in tmp_path.glob("*.xlsx"):
        sheets = pandas.read_excel(path, sheet_name=None, header=None, engine="openpyxl")
        seen = values_as_pandas_reads_them(path.read_bytes())
        for name, frame in sheets.items():
            assert int(frame.notna().sum().sum()) == len(seen[name]), name


def test_export_refuses_runs_without_spreadsheet_episodes(tmp_path: Path) -> None:
    out = tmp_path / "digits"
    assert cli("run", "digits", "-p", "oracle", "-n", "2", "--out", out).code == 0
    res = cli("export", out, "--format", "xlsx", "--out", tmp_path / "books")
    assert res.code == 2 and "no spreadsheet episodes" in res.stderr
    assert not (tmp_path / "books").exists()
    assert json.loads((out / "trajectories.jsonl").read_text().splitlines()[0])
