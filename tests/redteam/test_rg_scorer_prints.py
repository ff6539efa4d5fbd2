"""Attack: an answer that makes reasoning-gym's scorer print to the grading process's stdout.

``gymforge qa --json`` and ``serve --mcp --transport stdio`` write machine-readable output on
stdout; a scorer that prints (tower_of_hanoi does on its own; n_queens does when the answer
says so) corrupted both. Success means scorer output reaches gymforge's stdout or stderr;
the defence keeps it, bounded, in the verdict's facts.
"""

from __future__ import annotations

from typing import Any

import pytest
from rg_attack import exec_answer, judge, rg_task, use_test_uids

# the in-process n_queens attacks on one worker: each process builds the environment class
# once (its oracle probe generates n_queens datasets: several seconds), not once per worker
pytestmark = pytest.mark.xdist_group("rg-n-queens")


def test_scorer_output_stays_out_of_gymforge_streams(
    capfd: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    use_test_uids(monkeypatch)
    task = rg_task(seed=3)
    code = "import sys; print('X' * 100000); sys.stderr.write('NOT-JSON\\n' * 1000)"
    verdict = judge(task, exec_answer(code))
    out, err = capfd.readouterr()
    assert "XXXX" not in out and "NOT-JSON" not in out
    assert "XXXX" not in err and "NOT-JSON" not in err
    assert verdict["passed"] is False
    kept = str(verdict["facts"].get("scorer_stdout", ""))
    assert kept.startswith("XXXX") and len(kept) <= 4_000, len(kept)
