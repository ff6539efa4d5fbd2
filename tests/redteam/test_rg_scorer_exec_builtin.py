"""Attack: an n_queens answer that makes reasoning-gym's scorer execute code in the grader.

``(exec)((chr)(105)+(chr)(109)+...)`` contains no ``NAME(`` call, only letters, digits, ``+``
and parentheses (so the old regex guard let it through), yet reasoning-gym's n_queens scorer
``eval``s it (countdown's ``sympy.parse_expr`` did the same) and so executes the string it
builds. The payload writes a file on the host and marks the grading process's own
modules. Success would mean any policy runs anything on the grading host with the grader's
rights (its files, its seal key, its network).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from rg_attack import exec_answer, judge, rg_task, use_test_uids

# the in-process n_queens attacks on one worker: each process builds the environment class
# once (its oracle probe generates n_queens datasets: several seconds), not once per worker
pytestmark = pytest.mark.xdist_group("rg-n-queens")


def test_exec_in_the_answer_never_runs_in_the_grading_process(
    tmp_path: Path, monkeypatch: Any
) -> None:
    use_test_uids(monkeypatch)
    marker = tmp_path / "ran-on-the-host"
    code = (
        f"import sys; open({str(marker)!r}, 'w').write('pwned'); "
        "sys.modules['gymforge'].RG_PWNED = True"
    )
    task = rg_task()
    verdict = judge(task, exec_answer(code))
    assert not marker.exists(), "the answer wrote a file on the grading host"
    assert not getattr(sys.modules["gymforge"], "RG_PWNED", False), "the answer ran in-process"
    assert verdict["passed"] is False, verdict
