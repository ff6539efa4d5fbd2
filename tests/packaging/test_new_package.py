"""``gymforge new NAME --package``: the package layout, its entry point, and the same
environment template as the one-file scaffold."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from package_site import REPO

from gymforge.scaffold import class_name, scaffold, scaffold_package


def test_package_layout_and_entry_point(tmp_path: Path) -> None:
    written = scaffold_package("bins", tmp_path, "0.1.0")
    root = tmp_path / "bins"
    assert [p.relative_to(root).as_posix() for p in written] == [
        "pyproject.toml",
        "README.md",
        "bins/env.py",
        "bins/__init__.py",
        "tests/test_bins.py",
    ]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "bins" and project["dependencies"] == ["gymforge>=0.1.0"]
    assert project["entry-points"]["gymforge.environments"] == {"bins": "bins.env:BinsEnv"}
    text = "".join(p.read_text() for p in written)
    assert not re.search(r"__[A-Z]+__", text)  # every placeholder filled


def test_one_template_for_both_layouts(tmp_path: Path) -> None:
    alone = scaffold("bins", tmp_path / "alone")[0].read_text().splitlines()
    packaged = scaffold_package("bins", tmp_path / "pkg", "0.1.0")[2].read_text().splitlines()
    differ = [(a, b) for a, b in zip(alone, packaged, strict=True) if a != b]
    assert differ == [
        (
            f"Check it with: gymforge qa bins.py:{class_name('bins')}",
            "Check it with: gymforge qa bins  (after pip install -e .)",
        )
    ]


def test_cli_new_package_refuses_to_overwrite(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "gymforge.cli", "new", "crates", "--package", "--dir"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    made = subprocess.run([*cli, str(tmp_path)], capture_output=True, text=True, env=env)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "crates" / "crates" / "env.py").is_file()
    hint = f"pip install -e {tmp_path / 'crates'} && gymforge qa crates"
    assert hint in " ".join(made.stderr.split())  # the console wraps a long path's line
    again = subprocess.run([*cli, str(tmp_path)], capture_output=True, text=True, env=env)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr
