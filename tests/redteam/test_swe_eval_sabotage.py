"""Attack, through the public command: ``gymforge eval swe`` with a policy that solves half
the tasks and, on the other half, sabotages the judge (a ``..oops`` file, a ``.gf-scratch/``
file) instead of trying. The sabotage once turned those failures into verifier errors, left
out of success, so the policy scored 100% where an honest one scores 50%. Success of the
attack would be a success rate above 50% or any verifier error; the run must exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swe_attack import calc_task_file

POLICY = Path(__file__).with_name("swe_half_sabotage.py")


def test_sabotage_is_a_failure_in_eval(gymforge_cli: Any, tmp_path: Path) -> None:
    tasks = calc_task_file(tmp_path / "data", rows=4)
    out = tmp_path / "out"
    proc = gymforge_cli(
        "eval",
        "swe",
        "--dataset",
        str(tasks),
        "--policy",
        f"{POLICY}:policy",
        "--out",
        str(out),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdicts: dict[str, dict[str, Any]] = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "verdict" in (row.get("info") or {}):
            verdicts[row["task_id"]] = row["info"]["verdict"]
    assert sorted(verdicts) == ["calc-0", "calc-1", "calc-2", "calc-3"], sorted(verdicts)
    assert all(v["reason"] != "verifier_error" for v in verdicts.values()), verdicts
    assert [v["passed"] for _, v in sorted(verdicts.items())] == [True, False, True, False]
    metrics = json.loads((out / "eval.json").read_text())["metrics"]
    assert metrics["verifier_errors"] == 0, metrics
    assert metrics["success"]["rate"] == 0.5 and metrics["success"]["n"] == 4, metrics
