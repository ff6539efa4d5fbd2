"""Attack: edit a sealed run's ``eval.json``, ``summary.json`` or ``manifest.json``.

A sealed ``gymforge eval`` of the do-nothing policy scores 0%. The attacker leaves the
sealed trajectories alone and edits the documents beside them: the success rate in
``eval.json`` and ``summary.json`` becomes 100%, the manifest's policy becomes ``oracle``.
Success would mean ``gymforge report`` renders the edited numbers as the run's own with no
warning, and ``verify-log`` of the directory says it is intact: a leaderboard-ready report
from a run that solved nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from redteam_logs import KEY, cli


def _edit_eval(doc: dict[str, Any]) -> None:
    doc["metrics"]["success"]["rate"] = 1.0


def _edit_summary(doc: dict[str, Any]) -> None:
    doc["success_rate"] = 1.0


def _edit_manifest(doc: dict[str, Any]) -> None:
    doc["run"]["policy"] = doc["policy"]["spec"] = "oracle"


EDITS = {"eval.json": _edit_eval, "summary.json": _edit_summary, "manifest.json": _edit_manifest}


@pytest.fixture(scope="module")
def sealed_eval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sealed-eval") / "noop"
    done = cli("eval", "ledger", "--policy", "noop", "-n", "2", "--out", out, key=KEY)
    assert done.code == 0, done.stderr
    return out


def test_the_genuine_documents_are_sealed(sealed_eval: Path, tmp_path: Path) -> None:
    found = cli("verify-log", sealed_eval, key=KEY)
    assert found.code == 0, found.stderr
    assert "eval.json" in found.stderr and "summary.json" in found.stderr, found.stderr
    html = tmp_path / "report.html"
    done = cli("report", sealed_eval, "-o", html, key=KEY)
    assert done.code == 0, done.stderr
    assert "fails its seal" not in done.stderr and "not sealed" not in done.stderr, done.stderr
    assert "fails its seal" not in html.read_text()


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edited_document_is_flagged(sealed_eval: Path, tmp_path: Path, name: str) -> None:
    run = tmp_path / "noop"
    shutil.copytree(sealed_eval, run)
    doc = json.loads((run / name).read_text())
    EDITS[name](doc)
    (run / name).write_text(json.dumps(doc, indent=2) + "\n")

    checked = cli("verify-log", run, key=KEY)
    assert checked.code == 1, (checked.code, checked.stderr)
    assert name in checked.stderr and "fails its seal" in checked.stderr, checked.stderr

    html = tmp_path / "report.html"
    done = cli("report", run, "-o", html, key=KEY)
    assert done.code == 0, done.stderr
    assert f"{name} fails its seal" in done.stderr, done.stderr
    assert f"{name} fails its seal" in html.read_text()


def test_an_unsealed_run_is_reported_as_unsealed(tmp_path: Path) -> None:
    out = tmp_path / "plain"
    assert cli("eval", "ledger", "--policy", "noop", "-n", "2", "--out", out, key=None).code == 0
    html = tmp_path / "report.html"
    done = cli("report", out, "-o", html, key=None)
    assert done.code == 0, done.stderr
    said = "manifest.json, summary.json and eval.json are not sealed: the run was written "
    assert said in done.stderr, done.stderr
    assert said in html.read_text()


def test_a_sealed_run_reported_without_the_key_is_not_vouched_for(
    sealed_eval: Path, tmp_path: Path
) -> None:
    html = tmp_path / "report.html"
    done = cli("report", sealed_eval, "-o", html, key=None)
    assert done.code == 0, done.stderr
    assert "without the seal key" in done.stderr, done.stderr
    assert "without the seal key" in html.read_text()
