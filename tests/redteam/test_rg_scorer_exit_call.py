"""Attack: an answer ``(exit)(0)`` given to reasoning-gym's spiral_matrix scorer, and one that
calls ``os._exit(0)`` through n_queens' (both ``eval`` the answer), during ``gymforge run``.

When the scorer evaluated the answer in the grading process, ``exit`` raised ``SystemExit``
there: the run stopped with exit status 0 and wrote no trajectory, so a pipeline saw a
successful run with nothing in it. Success of the attack means ``gymforge run`` exits (with
any status) before recording every episode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rg_attack import SCORER_UID_BASE, exec_answer

ANSWERS = {  # (dataset, answer): spiral_matrix's scorer eval()s the answer
    "exit_builtin": ("spiral_matrix", "(exit)(0)"),
    "os_exit": ("n_queens", exec_answer("import os; os._exit(0)")),
}


@pytest.mark.parametrize("how", sorted(ANSWERS))
def test_an_exiting_answer_is_one_episodes_verifier_error(
    gymforge_cli: Any, tmp_path: Path, how: str
) -> None:
    from rg_attack import attack_policy_file

    out = tmp_path / "run"
    dataset, answer = ANSWERS[how]
    policy = attack_policy_file(tmp_path, answer)
    proc = gymforge_cli(
        "run",
        f"reasoning-gym:{dataset}",
        "--policy",
        policy,
        "-n",
        "2",
        "--out",
        str(out),
        env={"GYMFORGE_SANDBOX_UID_BASE": str(SCORER_UID_BASE - 64)},
        timeout=600,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    finals = [rec for rec in map(json.loads, lines) if "failure_reason" in rec]
    assert len(finals) == 2, lines[-1:]
    for rec in finals:
        assert rec["success"] is False
        assert rec["failure_reason"] == "verifier_error: ScorerError", rec["failure_reason"]
