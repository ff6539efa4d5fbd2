"""Attack: a completion that patches the rubric's reward function so that every later
completion the same process scores passes.

Run by the author's ``eval`` in ``vf_eval_rubric.py``, the completion replaces ``int`` in
the builtins with a function that makes every comparison succeed, and wraps
``Rubric._call_individual_reward_func`` to return 1.0. Were the rubric run in the gymforge
process, a later "no idea" (another client's, the next GRPO sample's) would score 1.0.
Success means one completion changes another rollout's score.
"""

from __future__ import annotations

from typing import Any

from interop_helpers import needs
from vf_attack import judge, use_test_uids

pytestmark = needs("verifiers")

PATCH = (
    'exec("import builtins, verifiers.legacy as vf\\n'
    "class Any(int):\\n"
    "    def __eq__(self, other): return True\\n"
    "builtins.int = lambda *a: Any(0)\\n"
    "async def ok(self, func, state): return 1.0\\n"
    'vf.Rubric._call_individual_reward_func = ok\\n") or 5'
)


def test_a_patching_completion_does_not_change_a_later_rollouts_score(monkeypatch: Any) -> None:
    use_test_uids(monkeypatch)
    judge(PATCH)
    later = judge("'no idea'", row=1)
    assert later["passed"] is False, later
    assert later["facts"].get("reward", 0.0) == 0.0, later
