"""Issue 34, finding 3: replay and reproduce take what they need from the run's manifest
and, when they cannot, say exactly what is missing, from any working directory.

A file environment is code: it is never imported because a manifest names it, but the
error names the absolute ``--env`` to pass; a dataset is data: it is found from the
manifest (its sha256 checked). ``reproduce`` never suggests a ``--resume`` it lacks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from wf_helpers import cli, math_rows, write_jsonl

from gymforge.scaffold import scaffold


@pytest.fixture
def file_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run of a scaffolded one-file environment, made from the folder holding the file
    (relative paths, as a user types them); the test then works from elsewhere."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    scaffold("fx", project)
    done = cli("run", "fx.py:FxEnv", "--policy", "oracle", "-n", "2", "--out", "runs/r1")
    assert done.code == 0, done.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return project / "runs" / "r1"


def test_the_manifest_records_a_file_environment_absolute_and_relative(file_run: Path) -> None:
    paths = json.loads((file_run / "manifest.json").read_text())["paths"]
    fx = file_run.parents[1] / "fx.py"
    assert paths["env"] == {"given": "fx.py", "absolute": str(fx), "relative": "../../fx.py"}
    assert paths["dataset"] is None


def test_replay_of_a_file_environment_run_names_the_env_to_pass(file_run: Path) -> None:
    fx = file_run.parents[1] / "fx.py"
    done = cli("replay", file_run / "trajectories.jsonl")
    assert done.code == 2 and len(done.error_lines) == 1, done.stderr
    assert f"--env {fx}:FxEnv" in done.error_lines[0], done.stderr
    again = cli("replay", file_run / "trajectories.jsonl", "--env", f"{fx}:FxEnv")
    assert again.code == 0 and "replay ok: 2 episodes" in again.stderr, again.stderr


def test_a_lone_trajectory_file_of_a_file_environment_hints_at_env_file_class(
    file_run: Path, tmp_path: Path
) -> None:
    lone = tmp_path / "lone.jsonl"
    shutil.copy(file_run / "trajectories.jsonl", lone)
    done = cli("replay", lone)
    assert done.code == 2 and "--env FILE.py:Class" in done.stderr, done.stderr
    assert "--env fx " not in done.stderr  # an id alone is no import path to suggest


def test_reproduce_of_a_file_environment_run_from_another_directory(file_run: Path) -> None:
    fx = file_run.parents[1] / "fx.py"
    out = file_run.parent / "again"
    done = cli("reproduce", file_run, "--out", out)
    assert done.code == 2 and f"--env {fx}:FxEnv" in done.stderr, done.stderr
    typed = cli("reproduce", file_run, "--out", out, "--env", "fx.py:FxEnv")  # as at run time
    assert typed.code == 2 and f"--env {fx}:FxEnv" in typed.stderr, typed.stderr
    done = cli("reproduce", file_run, "--out", out, "--env", f"{fx}:FxEnv")
    assert done.code == 0 and "2/2 episodes identical" in done.stderr, done.stderr
    used = cli("reproduce", file_run, "--out", out, "--env", f"{fx}:FxEnv")
    assert used.code == 2 and "already holds a run" in used.stderr, used.stderr
    assert "--resume" not in used.stderr and "--overwrite" in used.stderr


def test_replay_and_reproduce_of_a_dataset_run_find_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    write_jsonl(project / "rows.jsonl", math_rows(2))
    done = cli("run", "math", "--dataset", "rows.jsonl", "--policy", "oracle", "--out", "r")
    assert done.code == 0, done.stderr
    run = project / "r"
    monkeypatch.chdir(tmp_path)
    replayed = cli("replay", run / "trajectories.jsonl")
    assert replayed.code == 0 and "replay ok: 2 episodes" in replayed.stderr, replayed.stderr
    reproduced = cli("reproduce", run, "--out", tmp_path / "again")
    assert reproduced.code == 0 and "2/2 episodes identical" in reproduced.stderr

    lone = tmp_path / "lone.jsonl"  # no manifest beside it: the error says to pass --dataset
    shutil.copy(run / "trajectories.jsonl", lone)
    done = cli("replay", lone)
    assert done.code == 2 and "--dataset" in done.stderr, done.stderr

    (tmp_path / "data").mkdir()
    moved = tmp_path / "data" / "rows.jsonl"
    (project / "rows.jsonl").rename(moved)
    done = cli("reproduce", run, "--out", tmp_path / "third")
    assert done.code == 2 and len(done.error_lines) == 1, done.stderr
    assert "rows.jsonl" in done.stderr and "--dataset FILE" in done.stderr, done.stderr
    renamed = write_jsonl(tmp_path / "other.jsonl", math_rows(2))
    done = cli("reproduce", run, "--out", tmp_path / "third", "--dataset", renamed)
    assert done.code == 2 and "as rows.jsonl" in done.stderr, done.stderr
    done = cli("reproduce", run, "--out", tmp_path / "third", "--dataset", moved)
    assert done.code == 0 and "2/2 episodes identical" in done.stderr, done.stderr


def test_a_manifest_without_paths_is_still_read(file_run: Path) -> None:
    """Manifests written before ``paths`` existed: the given path is all there is."""
    manifest = json.loads((file_run / "manifest.json").read_text())
    del manifest["paths"]
    (file_run / "manifest.json").write_text(json.dumps(manifest))
    done = cli("replay", file_run / "trajectories.jsonl")
    assert done.code == 2 and "'fx.py:FxEnv'" in done.stderr and "--env" in done.stderr


def test_a_manifest_pointing_elsewhere_never_imports_that_file(
    file_run: Path, tmp_path: Path
) -> None:
    """The manifest locates a file only to name it in the error: a shared folder whose
    manifest points at another ``.py`` does not get it imported by replay or reproduce."""
    marker = tmp_path / "imported.txt"
    evil = tmp_path / "evil.py"
    evil.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n")
    manifest = json.loads((file_run / "manifest.json").read_text())
    manifest["paths"]["env"] = {"given": "fx.py", "absolute": str(evil), "relative": "nowhere.py"}
    (file_run / "manifest.json").write_text(json.dumps(manifest))
    replayed = cli("replay", file_run / "trajectories.jsonl")
    reproduced = cli("reproduce", file_run, "--out", tmp_path / "again")
    assert not marker.exists(), "a manifest chose the code that was imported"
    for done in (replayed, reproduced):
        assert done.code == 2 and f"--env {evil}:FxEnv" in done.stderr, done.stderr
