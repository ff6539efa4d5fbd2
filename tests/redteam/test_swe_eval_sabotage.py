"""Attack, through the public command: ``gymforge eval swe`` with a policy that solves half
the tasks and, on the other half, sabotages the judge (a ``..oops`` file, a ``.gf-scratch/``
file) instead of trying. The sabotage once turned those failures into verifier errors, left
out of success, so the policy scored 100% where an honest one scores 50%. Success of the
attack would be a success rate above 50% or any verifier error; the run must exit 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from half_eval import eval_half_policy
from swe_attack import calc_task_file

POLICY = Path(__file__).with_name("swe_half_sabotage.py")


def test_sabotage_is_a_failure_in_eval(gymforge_cli: Any, tmp_path: Path) -> None:
    tasks = calc_task_file(tmp_path / "data", rows=4)
    verdicts, metrics = eval_half_policy(gymforge_cli, "swe", tasks, POLICY, tmp_path / "out")
    assert sorted(verdicts) == ["calc-0", "calc-1", "calc-2", "calc-3"], sorted(verdicts)
    assert all(v["reason"] != "verifier_error" for v in verdicts.values()), verdicts
    assert [v["passed"] for _, v in sorted(verdicts.items())] == [True, False, True, False]
    assert metrics["verifier_errors"] == 0, metrics
    assert metrics["success"]["rate"] == 0.5 and metrics["success"]["n"] == 4, metrics
