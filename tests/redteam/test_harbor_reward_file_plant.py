"""Attack: the task's ``test.sh`` reports through ``reward.json`` (a score per part, 0 when
the tests fail, and exits 0); the agent's module, which the tests import inside the
verifier's container, writes ``/logs/verifier/reward.txt`` holding ``1``. Harbor reads
``reward.txt`` first, so a judge in Harbor's order would read the agent's file and never
the task's: success would pay an unsolved task in full. gymforge reads exactly one reward
file: both present is a failure (``no_reward``), since the one ``test.sh`` did not write
may be the tested code's.
"""

from __future__ import annotations

import pytest
from harbor_attack import CONTAINERS, FILES, play

from gymforge.core.types import Reply, ToolCall

pytestmark = CONTAINERS

JSON_TEST_SH = (
    "#!/bin/bash\nmkdir -p /logs/verifier\ncd /app\n"
    "if python3 /tests/check.py; then s=1; else s=0; fi\n"
    'printf \'{"tests": %s}\\n\' "$s" > /logs/verifier/reward.json\n'
)
PLANT = """try:
    with open("/logs/verifier/reward.txt", "w") as f:
        f.write("1\\n")
except OSError:
    pass
"""


def test_a_reward_txt_planted_beside_the_tasks_reward_json_pays_nothing() -> None:
    files = {**FILES, "tests/test.sh": JSON_TEST_SH}
    plant = ToolCall(
        name="write_file", arguments={"path": "/app/calc/__init__.py", "content": PLANT}
    )
    last, _ = play([plant, Reply(text="Done.")], naive=False, files=files)
    verdict = last.info["verdict"]
    assert verdict["facts"]["exit_code"] == 0
    assert not last.info["success"], verdict
    assert verdict["reason"] == "no_reward" and "both" in verdict["facts"]["detail"], verdict
    assert last.reward == pytest.approx(0.0)
