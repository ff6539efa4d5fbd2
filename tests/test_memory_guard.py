"""The suite's memory guard (``tests/memory_guard.py``) stops a test process that passes its
limit, names the test and shows where it was, and the other tests run on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOG = """
import time

def test_hog():
    held = []
    for _ in range(60):
        held.append(bytearray(32 << 20))
        time.sleep(0.02)
    time.sleep(30)  # the guard stops the process long before this ends

def test_small():
    assert sum(range(10)) == 45
"""
CONFTEST = """
from tests.memory_guard import pytest_configure, pytest_runtest_logstart, pytest_terminal_summary
"""


def test_a_test_past_the_limit_is_stopped_and_named(tmp_path: Path) -> None:
    (tmp_path / "test_hog.py").write_text(HOG)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    reports = tmp_path / "reports"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GYMFORGE_TEST_MEMORY_LIMIT_MIB": "512",
        "GYMFORGE_TEST_MEMORY_REPORTS": str(reports),
    }
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)]
    done = subprocess.run(
        [*args, "-n", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    assert "crashed while running 'test_hog.py::test_hog'" in out, out
    [report] = reports.glob("memory-guard-*.txt")
    text = report.read_text()
    assert "while running test_hog.py::test_hog" in text and "passed 512 MiB" in text
    assert "in test_hog" in text, text  # the stack shows where the test was
    assert "memory guard: test process" in out  # on the console as it happened, and in the summary
    # without xdist the one process stops; its console still says why
    run = {"cwd": tmp_path, "env": env, "capture_output": True, "text": True, "timeout": 300}
    single = subprocess.run([*args, "-p", "no:xdist"], **run)
    assert single.returncode == 70
    assert "while running test_hog.py::test_hog" in single.stdout + single.stderr
