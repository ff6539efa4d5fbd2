"""Attack: completions that make a Verifiers rubric (``vf_eval_rubric.py``, which ``eval``s
them) call ``exit(0)``, ``os._exit(0)`` or print, during ``gymforge run``.

Scored in the gymforge process, ``exit`` raised ``SystemExit`` there and ``os._exit`` ended
it: the run stopped with exit status 0 and wrote no complete trajectory, a loop stalled
the run for good, and printed text
landed in gymforge's own stdout (its machine-readable output). Success of the attack means
the run ends before recording every episode, or the rubric's output reaches gymforge's
streams.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from interop_helpers import REPO, needs
from vf_attack import REF, SCORER_UID_BASE, attack_policy_file

pytestmark = needs("verifiers")

RUN = ("-n", "2", "--out")
COMPLETIONS = {
    "exit_builtin": "exit(0)",
    "os_exit": "__import__('os')._exit(0)",
    "loops": "any(iter(int, 1))",
    "prints": "print('RUBRIC-SAYS-HELLO') or __import__('sys').stderr.write('RUBRIC-ERR') or 5",
}


@pytest.mark.parametrize("how", sorted(COMPLETIONS))
def test_an_exiting_or_printing_completion_is_one_episodes_verifier_error(
    tmp_path: Path, how: str
) -> None:
    import subprocess
    import sys

    out = tmp_path / "run"
    policy = attack_policy_file(tmp_path, COMPLETIONS[how])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["GYMFORGE_SANDBOX_UID_BASE"] = str(SCORER_UID_BASE - 64)
    proc = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "run", REF, "--policy", policy, *RUN, str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "RUBRIC-SAYS-HELLO" not in proc.stdout + proc.stderr
    assert "RUBRIC-ERR" not in proc.stdout + proc.stderr
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    finals = [rec for rec in map(json.loads, lines) if "failure_reason" in rec]
    assert len(finals) == 2, lines[-1:]
    for rec in finals:
        assert rec["success"] is False
        if how != "prints":  # a printing rubric still returns its score (the sum is wrong)
            assert rec["failure_reason"] == "verifier_error: ScorerError", rec["failure_reason"]
