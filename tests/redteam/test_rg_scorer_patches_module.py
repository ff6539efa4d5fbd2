"""Attack: an answer that patches reasoning-gym's n_queens scorer, so that every later
answer judged by the same process passes.

The payload (run by ``sympy.parse_expr`` inside the scorer) replaces
``CountdownDataset.score_answer`` with a function that returns 1.0. Before the scorer ran in
a sandbox, a later "no idea" answer (another WebSocket client's, or the next GRPO sample's)
then scored 1.0 in the same server. Success means an answer changes the score of another.
"""

from __future__ import annotations

from typing import Any

import pytest
from rg_attack import exec_answer, judge, rg_task, use_test_uids

# the in-process n_queens attacks on one worker: each process builds the environment class
# once (its oracle probe generates n_queens datasets: several seconds), not once per worker
pytestmark = pytest.mark.xdist_group("rg-n-queens")

PATCH = (
    "import sys\n"
    "for m in list(sys.modules.values()):\n"
    "    c = getattr(m, 'NQueensDataset', None)\n"
    "    if c is not None: c.score_answer = lambda self, answer, entry: 1.0\n"
)


def test_a_patching_answer_does_not_change_the_next_answers_score(monkeypatch: Any) -> None:
    use_test_uids(monkeypatch)
    task = rg_task(seed=1)
    judge(task, exec_answer(PATCH))
    later = judge(rg_task(seed=2), "no idea")
    assert later["passed"] is False, later
    assert later["facts"].get("score", 0.0) < 1.0, later
