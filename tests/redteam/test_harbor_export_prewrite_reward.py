"""Attack: during its episode on an exported ``code-agent`` task, the agent writes passing
``/logs/verifier/reward.txt`` and ``reward.json`` in its container (the exported verifier
writes ``reward.json``; a verifier that left an existing file alone would pay it), then
submits a wrong answer. Success would pay an unsolved exported task. The reward is read from
a directory made after the agent's container stopped, and the exported verifier removes any
reward file before it writes its own."""

from __future__ import annotations

from harbor_export_attack import CONTAINERS, play_exported

from gymforge.core.types import ToolCall

pytestmark = CONTAINERS

PLANT = (
    "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && "
    """echo '{"task": 1.0, "tests_passed": 0.5}' > /logs/verifier/reward.json"""
)


def test_a_reward_written_during_the_episode_is_never_read() -> None:
    plant = ToolCall(name="run", arguments={"command": PLANT, "timeout": 30})
    last, _, _ = play_exported(
        "def ENTRY(*args, **kwargs):\n    return None\n", before=[plant], env_id="code-agent"
    )
    verdict = last.info["verdict"]
    assert not verdict["passed"], verdict
    assert verdict["facts"]["reward_file"] == "reward.json"
    assert last.reward_components["harbor.task"] == 0.0
