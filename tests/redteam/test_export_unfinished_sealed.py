"""Attack: export training data from a sealed run whose end was cut off.

The attacker removes the closing run seal (and the last episode) of a sealed run, leaving a
file whose every remaining line is genuinely sealed but which no run seal closes, and asks
``gymforge export`` for SFT data. Success would mean a cut, unfinished run is turned into
training data as if it were whole (and with no key at hand, that nothing is even noticed),
or that a refused export still leaves an output file behind for a pipeline to pick up.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from redteam_logs import KEY, cli, ledger_run

# every test reads the module-scoped cut_run: one worker makes it once
pytestmark = pytest.mark.xdist_group("export-cut-run")


@pytest.fixture(scope="module")
def cut_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("export-cut")
    path = ledger_run(base / "run", "oracle", n=3)
    lines = path.read_text().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if '"record":"episode"' in line]
    cut = base / "cut"
    shutil.copytree(path.parent, cut)
    (cut / "trajectories.jsonl").write_text("".join(lines[: ends[-2] + 1]))
    return cut


@pytest.mark.parametrize("key", [KEY, None], ids=["with-key", "without-key"])
def test_export_refuses_a_cut_sealed_file(cut_run: Path, tmp_path: Path, key: str | None) -> None:
    target = tmp_path / "sft.jsonl"
    done = cli("export", cut_run, "--format", "sft", "--out", target, key=key)
    assert done.code == 3, (done.code, done.stderr)
    assert "unfinished" in done.stderr and "--allow-unfinished" in done.stderr, done.stderr
    assert not target.exists(), "a refused export leaves no output file"


def test_export_of_a_cut_file_needs_allow_unfinished(cut_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "sft.jsonl"
    done = cli("export", cut_run, "--format", "sft", "--out", target, "--allow-unfinished",
               key=KEY)  # fmt: skip
    assert done.code == 0, done.stderr
    assert "unfinished" in done.stderr  # still said, never silent
    assert len([json.loads(x) for x in target.read_text().splitlines()]) == 2
