"""Attack: the agent writes its own ``/tests/test.sh`` (and a passing test module), hoping
the verifier runs the agent's copy. Success would let any agent choose its own verifier.
gymforge mounts a fresh read-only copy of the task's ``tests/`` into a fresh container from
the pristine image after the agent is done; nothing the agent wrote outside its workspace
is there."""

from __future__ import annotations

from harbor_attack import CONTAINERS, play

from gymforge.core.types import Reply
from gymforge.envs.harbor.redteam import ATTACKS

pytestmark = CONTAINERS


def test_the_agents_own_test_sh_is_never_run() -> None:
    _, attack = ATTACKS["planted_tests"]
    last, _ = play([*attack(), Reply(text="Done.")], naive=False)
    verdict = last.info["verdict"]
    assert not last.info["success"] and verdict["reason"] == "no_reward"
    assert "AssertionError" in verdict["facts"]["output_tail"]  # the task's check.py ran
