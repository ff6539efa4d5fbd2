"""Attack: stall the JSON and SQL judges with one fence line of blanks.

``extract_block`` (the extract and sql environments' answer extraction) tested each line of a
reply for a fence with ``^[ \\t]*```[ \\t]*([\\w+.-]*)[ \\t]*$``: on a line ``` + 60,000
spaces + ``x y``, which is no fence, the two blank runs around the empty language tag were
retried against each other, quadratic: about 10 s of CPU for one 60 KB reply, inside the
extract environment's 16,384-token budget, on the event loop that served sessions share
(the threat model promises a few milliseconds at the ceiling). Success would mean a policy
choosing seconds of judge time per reply. The defence: a fence is three backticks after
blanks, and the rest of the line, stripped, must be a language tag (the same lines are
fences: ``test_same_fences``); the bomb runs in a child under a CPU limit far above what a
linear pass needs.
"""

from __future__ import annotations

import random
import re
import subprocess

import pytest
from cpu_capped import run_capped

from gymforge.verify import answer_block

CPU_LIMIT_S = 6  # a linear pass takes milliseconds; the quadratic one took about 10 s
BOMB = "'```' + ' ' * 60_000 + 'x y'"


def _run_capped(code: str) -> subprocess.CompletedProcess[str]:
    return run_capped(code, CPU_LIMIT_S)


@pytest.mark.parametrize(
    ("module", "env_class"),
    [("gymforge.envs.extract", "ExtractEnv"), ("gymforge.envs.sql", "SqlEnv")],
)
def test_a_fence_line_of_blanks_is_read_in_linear_time(module: str, env_class: str) -> None:
    done = _run_capped(
        f"""
        import sys
        sys.path.insert(0, ".")
        from gymforge.core import Reply, SyncEnvironment
        from {module} import {env_class} as Env

        env = SyncEnvironment(Env())
        env.reset(Env.tasks.sample(1, 1, "train")[0], 0)
        result = env.step(Reply(text={BOMB}))
        assert not result.truncated, result.info
        print(result.info["verdict"]["passed"])
        """
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "False"


_OLD = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[ \t]*$")


def test_same_fences() -> None:
    """Lines of backticks, blanks, tags and other characters are fences, with the same tag,
    exactly when the old expression said so."""
    r = random.Random(3)
    parts = ["```", "``", "`", " ", "\t", "json", "sql", "x y", "\r", "-", "+", ".", "é", ""]
    lines = ["".join(r.choice(parts) for _ in range(r.randint(1, 6))) for _ in range(20_000)]
    lines += ["```json", "  ```  sql  ", "```", "``` json x", "```json\r", "\t```\t"]
    for line in lines:
        old = _OLD.match(line)
        assert answer_block.fence_tag(line) == (None if old is None else old[1]), repr(line)
