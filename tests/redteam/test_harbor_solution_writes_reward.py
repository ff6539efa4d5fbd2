"""Attack: the agent's code, imported by the task's own tests inside the verifier, writes
``/logs/verifier/reward.txt`` (1) itself and leaves the bug in place; the test then fails and
a ``test.sh`` that writes its reward only on success (``set -e``) exits early, leaving the
agent's file. Success would pay an unsolved task whenever the tests import the solution.
gymforge counts a reward only from a ``test.sh`` that exited 0; a failed one pays nothing."""

from __future__ import annotations

import pytest
from harbor_attack import CONTAINERS, play

from gymforge.core.types import Reply, ToolCall

pytestmark = CONTAINERS

PLANTED = (
    "import os\n"
    "os.makedirs('/logs/verifier', exist_ok=True)\n"
    "with open('/logs/verifier/reward.txt', 'w') as f:\n"
    "    f.write('1')\n\n\n"
    "def mean(xs):\n"
    "    return sum(xs) / (len(xs) - 1)\n"
)


def test_a_reward_written_by_the_agents_code_during_a_failed_test_sh_pays_nothing() -> None:
    write = ToolCall(name="write_file", arguments={"path": "calc/ops.py", "content": PLANTED})
    last, _ = play([write, Reply(text="Done.")], naive=False)
    verdict = last.info["verdict"]
    assert not last.info["success"]
    assert verdict["reason"] == "test_sh_failed" and verdict["facts"]["exit_code"] == 1
    assert last.reward == pytest.approx(0.0)
