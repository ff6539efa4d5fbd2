"""The real thing, in fresh virtual environments and with pip: ``pip install -e`` of a
package that ``gymforge new --package`` wrote makes it usable at once, and the wheel that
``gymforge pack`` builds, installed into another fresh venv, passes ``gymforge qa`` there.

Each venv gets gymforge from this checkout (``pip install --no-deps``); gymforge's own
dependencies (and pip, setuptools) come from the running interpreter's site-packages through
a ``.pth`` line naming a directory of links that leaves out every gymforge distribution, so
nothing is downloaded (``--no-index``) and no other gymforge install is in sight."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from package_site import REPO

pytestmark = pytest.mark.slow
PIP = ("-q", "--no-index", "--no-build-isolation", "--disable-pip-version-check")


def _run(*cmd: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` outside this process's PYTHONPATH; it must exit 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{cmd}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


def dependencies(build_dir: Path) -> Path:
    """A directory of links to this interpreter's site-packages (gymforge's dependencies,
    pip and setuptools), without any gymforge distribution of its own."""
    deps = build_dir / "deps"
    if deps.exists():
        return deps
    deps.mkdir()
    for where in dict.fromkeys([sysconfig.get_paths()["purelib"], *site.getsitepackages()]):
        for item in Path(where).iterdir():
            lowered = item.name.lower()
            if lowered.startswith(("gymforge", "__editable__")) or (deps / item.name).exists():
                continue
            (deps / item.name).symlink_to(item)
    return deps


def fresh_venv(where: Path, build_dir: Path) -> Path:
    """A new venv (no packages of its own) with gymforge installed from a copy of this
    checkout; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    pth = Path(purelib.stdout.strip(), "gymforge_test_deps.pth")
    pth.write_text(f"{dependencies(build_dir)}\n")
    checkout = build_dir / "gymforge-src"  # a copy: a build must not write into the checkout
    if not checkout.exists():
        shutil.copytree(
            REPO,
            checkout,
            ignore=shutil.ignore_patterns(".venv*", ".git", "runs", "*.egg-info", "__pycache__"),
        )
    _run(python, "-m", "pip", "install", *PIP, "--no-deps", checkout)
    return python


def gymforge(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run(python, "-m", "gymforge.cli", *args, cwd=cwd)


def test_new_package_pip_install_e_then_pack_then_wheel_passes_qa_in_a_clean_venv(
    tmp_path: Path,
) -> None:
    author = fresh_venv(tmp_path / "author", tmp_path)
    gymforge(author, "new", "bins", "--package", "--dir", str(tmp_path), cwd=tmp_path)
    package = tmp_path / "bins"
    _run(author, "-m", "pip", "install", *PIP, "-e", package)

    listed = {
        r["id"]: r for r in json.loads(gymforge(author, "list", "--json", cwd=tmp_path).stdout)
    }
    assert (listed["bins"]["package"], listed["bins"]["status"]) == ("bins", "ok")
    assert json.loads(gymforge(author, "qa", "bins", "--json", cwd=tmp_path).stdout)["passed"]
    gymforge(author, "qa", "bins", "--record-golden", cwd=tmp_path)  # beside the source
    assert (package / "bins" / "bins.golden.json").is_file()
    tests = _run(author, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=package)
    assert "10 passed" in tests.stdout, tests.stdout[-2000:]

    packed = gymforge(author, "pack", str(package), "--no-isolation", cwd=tmp_path)
    wheel = json.loads(packed.stdout)["wheel"]

    user = fresh_venv(tmp_path / "user", tmp_path)
    _run(user, "-m", "pip", "install", *PIP, wheel)
    elsewhere = tmp_path / "elsewhere"  # no source tree in sight: the installed wheel alone
    elsewhere.mkdir()
    where = _run(user, "-c", "import bins; print(bins.__file__)", cwd=elsewhere).stdout
    assert str(tmp_path / "user") in where
    report = json.loads(gymforge(user, "qa", "bins", "--json", cwd=elsewhere).stdout)
    assert report["env"] == "bins" and report["passed"] and len(report["checks"]) == 10
    details = " ".join(c["details"] for c in report["checks"])
    assert "golden renderings of renderer_version '1' match" in details  # shipped in the wheel
    shown = gymforge(user, "qa", "bins", "--show-embedded", cwd=elsewhere)
    assert json.loads(shown.stdout)["report"]["passed"]
    ran = gymforge(user, "run", "bins", "-n", "3", "--out", "r", "--json", cwd=elsewhere)
    assert json.loads(ran.stdout)["success_rate"] == 1.0
