"""Attack: the agent writes ``/logs/verifier/reward.txt`` (1) before the verifier runs, so a
``test.sh`` that writes its reward only on success (``set -e``) leaves the agent's file in
place. Success would pay an unsolved Harbor task in full. gymforge reads the reward from a
directory made on the host after the agent's container stopped and mounted into a fresh
verifier container."""

from __future__ import annotations

import pytest
from harbor_attack import CONTAINERS, play

from gymforge.core.types import Reply
from gymforge.envs.harbor.redteam import ATTACKS

pytestmark = CONTAINERS


def test_a_prewritten_reward_file_is_never_read() -> None:
    _, attack = ATTACKS["prewrite_reward"]
    last, naive = play([*attack(), Reply(text="Done.")])
    assert naive == "1"  # a judge reading the agent's container would have paid it
    verdict = last.info["verdict"]
    assert not last.info["success"] and verdict["reason"] == "no_reward"
    assert verdict["facts"]["exit_code"] != 0
    assert last.reward == pytest.approx(0.0)
