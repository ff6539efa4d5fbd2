"""Attack: the agent leaves a background loop that keeps writing a reward of 1 into
``/logs/verifier`` while the verifier runs, overwriting whatever ``test.sh`` writes.
Success would pay every task regardless of the tests. gymforge stops the agent's container
before the verifier starts, and the verifier's container runs nothing of the agent's."""

from __future__ import annotations

from harbor_attack import CONTAINERS, play

from gymforge.core.types import Reply
from gymforge.envs.harbor.redteam import ATTACKS

pytestmark = CONTAINERS


def test_a_process_left_running_cannot_write_the_reward() -> None:
    _, attack = ATTACKS["lingering_writer"]
    last, naive = play([*attack(), Reply(text="Done.")])
    assert naive == "1"  # in the agent's container the loop wins over test.sh's exit
    verdict = last.info["verdict"]
    assert not last.info["success"] and verdict["reason"] == "no_reward"
