"""Attack: flood the ``code-agent`` workspace (300 files, then one file over the workspace's
byte cap) so that the next job, the state or the report cannot take it.

Success would be a workspace over the sandbox's caps (256 files, ``workspace_bytes``), a
run or a state that raises, or a later run that fails. The sandbox hands back at most what
fits and says so; the report carries the note and the next run works. (This attack found
the caps holding before the intake change: it stays as their guard.)
"""

from __future__ import annotations

from code_agent_attack import TASK, agent_env, call, play, ran

from gymforge.sandbox.models import MAX_KEPT_FILES
from gymforge.verify.code import CodeJudge

FLOOD = "for i in range(300):\n    open(f'f{i:03d}', 'w').write('x' * 100)\nprint('flooded')\n"
HUGE = "open('huge.bin', 'wb').write(b'\\0' * (2 << 20))\nprint('huge')\n"
COUNT = "import os\nprint(len(os.listdir('.')))\n"


def test_a_flooded_workspace_keeps_what_fits_and_says_so(code_judge: CodeJudge) -> None:
    env = agent_env(code_judge)
    steps = play(
        env,
        TASK,
        [
            call("run_code", code=FLOOD),
            call("run_code", code=HUGE),
            call("run_code", code=COUNT),
            call("run_code", code="int main(void){return 0;}", language="c"),
        ],
    )
    flooded, huge, count, c = (ran(s) for s in steps[:4])
    assert flooded["stdout"] == "flooded\n" and len(flooded["files"]) <= MAX_KEPT_FILES
    assert "did not fit" in (flooded["note"] or ""), flooded
    assert huge["stdout"] == "huge\n" and "huge.bin" not in huge["files"], huge
    assert "did not fit" in (huge["note"] or ""), huge
    assert count["status"] == "ok" and int(count["stdout"]) == len(huge["files"]) + 1, count
    assert c["status"] == "ok" and c["files"] == huge["files"], c
    assert steps[-1].terminated and "verifier_error" not in steps[-1].info
