"""Attack: make the countdown checker raise with a claimed value written ``= - N``.

A countdown answer may end with ``= N`` naming the target; where negatives are allowed the
claim may be signed, and the checker's pattern let blanks sit between the sign and the
digits (``- 24``), which Python's ``int`` refuses: the checker raised ``ValueError`` and the
episode became a verifier error, the judge's fault in every record, for any expression
with that suffix. Success would mean a policy turning any wrong answer into the judge's
error (counted as a failure, but as the environment's bug: ``verifier_error`` rates, a
``gymforge grade`` line with an error instead of a verdict). The defence: the claim is read
as the expression's unary minus is, blanks and all, and judged.
"""

from __future__ import annotations

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.puzzles import PuzzlesEnv


def test_a_spaced_signed_claim_is_judged_not_a_verifier_error() -> None:
    env = SyncEnvironment(PuzzlesEnv())
    judged = 0
    for task_id in PuzzlesEnv.tasks.sample(300, 3, "train"):
        if not task_id.startswith("puzzles.countdown/v2"):
            continue
        env.reset(task_id, 0)
        truth = env.env.task.truth
        if not truth.get("negatives"):
            continue
        expression, target = truth["solution"], truth["target"]
        for claim, reason in ((f"- {target}", "false_claim"), (f" {target} ", None)):
            env.reset(task_id, 0)
            result = env.step(Reply(text=f"Answer: {expression} = {claim}"))
            assert not result.info.get("verifier_error"), result.info["verdict"]
            assert result.info["verdict"]["reason"] == reason, result.info["verdict"]
        env.reset(task_id, 0)
        result = env.step(Reply(text=f"Answer: -({expression}) = - {target}"))
        assert result.info["verdict"]["reason"] == "wrong_target", result.info["verdict"]
        judged += 1
    assert judged >= 3
