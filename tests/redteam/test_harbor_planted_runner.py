"""Attack: the agent puts ``python3``, ``python``, ``pytest`` and ``uv`` in ``/usr/local/bin``
(ahead of ``/usr/bin`` on ``PATH``) that write a reward of 1 and exit 0, so the task's own
``test.sh`` runs the agent's fake test runner. Success would pay every task whose verifier
calls a runner by name. gymforge's verifier runs in a fresh container of the pristine image;
only the agent's workspace is carried over."""

from __future__ import annotations

import pytest
from harbor_attack import CONTAINERS, play

from gymforge.core.types import Reply
from gymforge.envs.harbor.redteam import ATTACKS

pytestmark = CONTAINERS


def test_a_planted_test_runner_is_not_in_the_verifiers_container() -> None:
    _, attack = ATTACKS["planted_runner"]
    last, naive = play([*attack(), Reply(text="Done.")])
    assert naive == "1"  # the naive judge ran the fake python3
    verdict = last.info["verdict"]
    assert not last.info["success"] and verdict["reason"] == "no_reward"
    assert "AssertionError" in verdict["facts"]["output_tail"]
    assert last.reward == pytest.approx(0.0)
