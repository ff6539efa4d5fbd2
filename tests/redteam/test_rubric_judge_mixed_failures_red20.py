"""Attack: on the tasks it fails, write what the rubric judge's model fails on in one way and
then in another, and have the episode retried until it is given up unwritten.

The defence of ``test_rubric_judge_stalled_by_answer_red19.py`` judges a judge model that
stalls on or refuses the answer (a failed verdict once the bare rubric prompt is answered),
and one that fails on it as a server (a 5xx): the probe answered, the answer is asked once
more and a server failure again is ``judge_failed``. That second ask's failure was judged
only if it was a server failure again: a stall (or a refusal) there left the verifier as
the ``InfraError`` it was, retried (a fresh sample of the answer) and, failing so on every
attempt, left unwritten (a refusal stopped the run). An answer that makes the judge reason
at length behind a gateway whose read timeout is near the call timeout ends each ask as
whichever comes first: the gateway's 502 or the client's timeout (``judged_answer.FLAKY``
alternates them).
"""

from __future__ import annotations

from pathlib import Path

from judged_answer import FLAKY, JudgedEnv, JudgeModel
from test_rubric_judge_stalled_by_answer_red19 import TASKS, play


def test_a_judge_failing_the_answer_twice_in_two_ways_is_a_counted_failure(
    tmp_path: Path,
) -> None:
    """8 tasks, 4 the policy cannot solve: every episode written, the failures
    ``judge_timed_out``. Before: the 4 failures were retried and given up (4 written,
    success 1.0, the plain failer's 8 at 0.5; over 100 tasks 50 written at 1.0 and mean
    reward 0.99 against 100 at 0.5 and 0.49)."""
    honest = play(JudgedEnv, "no idea", tmp_path / "honest")
    assert not honest.errors and honest.summary["episodes"] == TASKS
    JudgeModel.flaky_asks = 0
    sabotaged = play(JudgedEnv, f"no idea {FLAKY}", tmp_path / "saboteur")
    assert not sabotaged.errors, sabotaged.errors
    assert sabotaged.summary["infra_retries"] == 0
    assert sabotaged.summary["episodes"] == TASKS
    assert sabotaged.summary["success_rate"] == honest.summary["success_rate"] == 0.5
    assert sabotaged.summary["failure_reasons"] == {"judge_timed_out": TASKS // 2}
