"""Attack: a package ships a hand-written ``*.qa.json`` claiming a clean QA run.

``gymforge pack`` embeds the QA report of the source it packed as ``<id>.qa.json`` beside
the environment's module, and ``gymforge list`` shows its verdict. The attacker writes that
file by hand (10/10 checks passed) into a package that never went through ``pack``, or
ships a genuine report beside code changed after QA ran. Success would mean ``gymforge
list`` shows "10/10 passed" for code no QA run ever saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import gymforge
from gymforge.registry.packed import source_hashes
from gymforge.scaffold import scaffold_package

ROOT = Path(__file__).resolve().parents[2]


def _install(tmp_path: Path) -> tuple[Path, Path]:
    """The scaffolded ``stockroom`` package installed as ``pip install -e`` would: a
    dist-info with its entry points in a site directory, its source tree on the path."""
    scaffold_package("stockroom", tmp_path / "src", "0.1.0")
    source = tmp_path / "src" / "stockroom"
    points = tomllib.loads((source / "pyproject.toml").read_text())["project"]["entry-points"]
    info = tmp_path / "site" / "stockroom-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stockroom\nVersion: 0.1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in points["gymforge.environments"].items())
    (info / "entry_points.txt").write_text(f"[gymforge.environments]\n{lines}")
    return tmp_path / "site", source


def _listed(site: Path, source: Path) -> dict[str, Any]:
    path = os.pathsep.join([str(ROOT), str(site), str(source)])
    done = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["id"]: r for r in json.loads(done.stdout)}
    return rows["stockroom"]


def _report(hashes: dict[str, str] | None) -> dict[str, Any]:
    checks = [{"name": f"check_{i}", "passed": True} for i in range(10)]
    report = {"env": "stockroom", "version": "0.1.0", "passed": True, "checks": checks}
    doc: dict[str, Any] = {
        "env": "stockroom",
        "package": "stockroom",
        "package_version": "0.1.0",
        "gymforge_version": gymforge.__version__,
        "report": report,
    }
    if hashes is not None:
        doc["sources"] = hashes
    return doc


def test_a_hand_written_qa_report_is_unverified(tmp_path: Path) -> None:
    site, source = _install(tmp_path)
    (source / "stockroom" / "stockroom.qa.json").write_text(json.dumps(_report(None)))
    qa = _listed(site, source)["qa"]
    assert "unverified" in qa and "10/10 passed" not in qa.split("unverified")[0], qa


def test_a_report_beside_changed_code_is_unverified(tmp_path: Path) -> None:
    site, source = _install(tmp_path)
    module_dir = source / "stockroom"
    (module_dir / "stockroom.qa.json").write_text(json.dumps(_report(source_hashes(module_dir))))
    assert _listed(site, source)["qa"].startswith("10/10 passed"), "tied to these files"

    env_file = module_dir / "env.py"
    env_file.write_text(env_file.read_text() + "\n# changed after QA ran\n")
    qa = _listed(site, source)["qa"]
    assert qa.startswith("unverified") and "env.py" in qa, qa
