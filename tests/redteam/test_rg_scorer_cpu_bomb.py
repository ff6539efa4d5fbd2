"""Attack: an answer whose evaluation never ends, handed to reasoning-gym's n_queens scorer.

``(exec)`` of ``sum(range(10**12))`` (built from ``(chr)(n)``): the scorer's ``eval`` runs
it. In the grading process it held the CPU (and a server's event loop) for as long
as it ran: one factorial stalled a server for 35 s. Success means the grading process does the
work: the judging call does not come back as that episode's verifier error within the
scorer's own limits. The attack runs in a child process so the test itself stays bounded.

The child skips the oracle probe of building the environment class (``oracle_gap``: it builds
reasoning-gym's n_queens datasets up to the top level: 15 to 60 s on a loaded 2-core machine;
the other n_queens attacks build the real class in the test process). The probe only
decides whether the class offers an oracle and which QA checks apply; the judging path the
attack goes through (``verify``, the scorer sandbox) is the environment's own. Its scoring
jobs get the production limits but a 5 s ``call_timeout`` instead of 20 s: the endless answer
outlasts either, and the grading process running it would still never answer (the child's
own 240 s timeout fails the test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from rg_attack import ROOT, SCORER_UID_BASE, exec_answer

CHILD = """
import functools, json
import gymforge.envs.reasoning_gym.env as rg_env
import gymforge.envs.third_party_scoring as tps
limits = tps.LIMITS.model_copy(update={{"call_timeout": 5.0}})  # it never ends: not 20 s
tps.scoring_job = functools.partial(tps.scoring_job, limits=limits)
rg_env.oracle_gap = lambda family, strict=True: (None, None)  # n_queens stores its answers
from rg_attack import rg_task, judge
print(json.dumps(judge(rg_task(), {answer!r})))
"""


def test_an_endless_answer_is_a_verifier_error_not_the_graders_work() -> None:
    code = CHILD.format(answer=exec_answer("sum(range(10**12))"))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests" / "redteam")]),
        GYMFORGE_SANDBOX_UID_BASE=str(SCORER_UID_BASE - 64),
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise AssertionError("the grading process itself ran the endless answer") from err
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict = json.loads(proc.stdout.strip().splitlines()[-1])
    assert verdict["passed"] is False
    assert verdict["verifier_error"] is True, verdict
    assert "timeout" in json.dumps(verdict["facts"]), verdict
