"""A run of a user's swe task file replays exactly: the visible tests are ``python -m
unittest`` (which prints ``Ran 1 test in 0.012s``), and no wall-clock figure may reach an
observation (``gymforge.envs.swe.normalize``). The run is recorded with ``gymforge run`` and
replayed with ``gymforge replay``, as a user would."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gymforge.envs.swe.normalize import normalize_output
from gymforge.sandbox.doctor import bwrap_works

needs_sandbox = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")

BUGGY = "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n"
FIXED = "def mean(xs):\n    return sum(xs) / len(xs)\n"
# the visible test takes a little time of its own, so the figure unittest prints differs
# from run to run
VISIBLE = (
    "import time\nimport unittest\nfrom calc.ops import mean\n\n\nclass T(unittest.TestCase):\n"
    "    def test_runs(self):\n        time.sleep(0.013)\n"
    "        self.assertIsInstance(mean([1.0, 2.0]), float)\n"
)
HIDDEN = (
    "import unittest\nfrom calc.ops import mean\n\n\nclass H(unittest.TestCase):\n"
    "    def test_mean(self):\n        self.assertEqual(mean([1, 2, 3]), 2)\n"
)


def _write(root: Path, files: dict[str, str]) -> None:
    for p, t in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(t)


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_sandbox
def test_a_task_file_run_with_unittest_replays_exactly(tmp_path: Path) -> None:
    for name, ops in (("calc", BUGGY), ("calc-fixed", FIXED)):
        files = {"calc/__init__.py": "", "calc/ops.py": ops, "tests/test_ops.py": VISIBLE}
        _write(tmp_path / "repos" / name, files)
    _write(tmp_path / "hidden/calc-1", {"hidden/test_hidden.py": HIDDEN})
    row = {
        "task_id": "calc-1",
        "repo": "repos/calc",
        "title": "mean() is wrong",
        "issue": "mean([1, 2, 3]) returns 3.0 but the mean is 2.",
        "visible_command": "python -m unittest discover -s tests",
        "hidden_command": "python -m unittest discover -s hidden",
        "hidden_tests": "hidden/calc-1",
        "solution": "repos/calc-fixed",
    }
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(row) + "\n")
    out = tmp_path / "run"
    done = _cli("run", "swe", "--dataset", tasks, "--policy", "oracle", "--out", out)
    assert done.returncode == 0, done.stderr
    recorded = (out / "trajectories.jsonl").read_text()
    assert "Ran 1 test in <time>" in recorded  # the oracle ran the visible tests
    assert not re.search(r"Ran 1 test in \d", recorded)  # no figure of unittest's own
    # the replay runs the tests again, taking its own time (the sleep in VISIBLE sees to it)
    again = _cli("replay", out / "trajectories.jsonl", "--dataset", tasks)
    assert again.returncode == 0, again.stderr
    assert "replay ok" in again.stderr, again.stderr


def test_runner_timings_are_normalised_and_data_is_not() -> None:
    cases = {
        "Ran 3 tests in 0.004s\n\nOK": "Ran 3 tests in <time>\n\nOK",
        "Ran 1 test in 12.5s": "Ran 1 test in <time>",
        "===== 2 passed, 1 warning in 0.12s =====": "===== 2 passed, 1 warning in <time> =====",
        "== 1 failed, 1 passed in 75.50s (0:01:15) ==": "== 1 failed, 1 passed in <time> ==",
        "0.50s call     tests/test_x.py::test_a": "<time> call     tests/test_x.py::test_a",
        "Slowest test durations\n0.001s test_x (t.T.test_x)":
            "Slowest test durations\n<time> test_x (t.T.test_x)",
        "PASSED tests/t.py::a (0.01s)": "PASSED tests/t.py::a (<time>)",
        "Finished in 0.2 seconds": "Finished in <time>",
        "the build took 12ms": "the build took <time>",
        "<function f at 0x7f3a9c2b1d30>": "<function f at 0x?>",
    }  # fmt: skip
    for raw, want in cases.items():
        assert normalize_output(raw) == want
        assert normalize_output(want) == want  # idempotent
    for data in ("assert wait(5) == 5", "expected 0.5s, got 1s", "AssertionError: 3 != 2",
                 "FAILED tests/t.py::test_in - assert 'in 0.5s' == 'x'"):  # fmt: skip
        assert normalize_output(data) == data
