"""Attack: a shared trajectory file (or manifest) chooses the code that replay imports.

The attacker hands over a run whose records name ``/tmp/.../evil.py:Evil`` as their
environment (the digest chains recomputed, so the file is intact as far as the keyless
check can tell), or a manifest whose ``run.env`` names it. ``evil.py`` writes a marker file
the moment it is imported. Success would mean ``gymforge replay FILE`` or ``gymforge
reproduce MANIFEST`` runs code the file picked, on the machine of whoever checks it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from redteam_logs import cli, forge, ledger_run, read

EVIL = """
from pathlib import Path
Path({marker!r}).write_text("imported")
from gymforge.envs.ledger import LedgerEnv as Evil
"""


@pytest.fixture
def evil(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "imported.txt"
    module = tmp_path / "evil_env_mod.py"
    module.write_text(EVIL.format(marker=str(marker)))
    return f"{module}:Evil", marker


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ledger_run(tmp_path_factory.mktemp("replay-env") / "run", "oracle", n=2, key=None)


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), stderr
    return lines[0]


def test_replay_never_imports_the_file_named_by_the_records(
    plain_run: Path, tmp_path: Path, evil: tuple[str, Path]
) -> None:
    env_id, marker = evil
    records = read(plain_run)
    for r in records:
        r["env_id"] = env_id
    forged = tmp_path / "shared.jsonl"
    forge(records, forged, strip_seals=True)

    done = cli("replay", forged, key=None)
    assert not marker.exists(), "replay imported the code the file named"
    assert done.code != 0
    line = _one_error_line(done.stderr)
    assert "--env" in line and env_id in line, line

    named = cli("replay", forged, "--env", env_id, key=None)  # the user's own choice runs
    assert marker.exists() and named.code == 0, named.stderr


def test_reproduce_never_imports_the_file_named_by_the_manifest(
    plain_run: Path, tmp_path: Path, evil: tuple[str, Path]
) -> None:
    env_id, marker = evil
    run = tmp_path / "shared"
    shutil.copytree(plain_run.parent, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["run"]["env"] = env_id
    (run / "manifest.json").write_text(json.dumps(manifest))

    done = cli("reproduce", run, "--out", tmp_path / "again", key=None)
    assert not marker.exists(), "reproduce imported the code the manifest named"
    assert done.code != 0
    line = _one_error_line(done.stderr)
    assert "--env" in line and env_id in line, line
