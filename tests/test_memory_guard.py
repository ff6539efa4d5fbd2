"""The suite's memory guard (``tests/memory_guard.py``) fails the test that takes its
process past the limit, names it and shows where it was, and the run goes on: under xdist
with ``--dist loadgroup`` (as ``make test`` runs) and in a single process."""

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
    time.sleep(30)  # the guard fails the test long before this

def test_small():
    assert sum(range(10)) == 45
"""
CONFTEST = """
from tests.memory_guard import (
    pytest_configure, pytest_runtest_logstart, pytest_terminal_summary, pytest_unconfigure
)
"""


def test_a_test_past_the_limit_fails_alone_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "test_hog.py").write_text(HOG)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)]
    for mode in (["-n", "2", "--dist", "loadgroup"], ["-p", "no:xdist"]):
        reports = tmp_path / f"reports{len(mode)}"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "GYMFORGE_TEST_MEMORY_LIMIT_MIB": "512",
            "GYMFORGE_TEST_MEMORY_REPORTS": str(reports),
        }
        done = subprocess.run(
            [*args, *mode], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        out = done.stdout + done.stderr
        assert done.returncode == 1, out
        assert "1 failed, 1 passed" in out and "MemoryGuardTripped" in out, out
        assert "FAILED test_hog.py::test_hog" in out, out
        texts = [p.read_text() for p in reports.glob("memory-guard-*.txt")]
        assert texts and all("while running test_hog.py::test_hog" in t for t in texts), out
        assert "passed 512 MiB" in texts[0] and "in test_hog" in texts[0], texts[0]
        assert "memory guard: test process" in out  # as it happened, and in the summary
