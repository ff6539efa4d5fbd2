"""The code judge run for real, in a child under a CPU-time limit, on a HumanEval-shaped
``digits`` task whose check the attack writes: a right answer and ``return n`` (an answer
echoing its argument) judged one after the other. How the corpus shows a check driven by
the answer's values cannot hold the judge, without a wall-clock figure."""

from __future__ import annotations

import json

import pytest
from cpu_capped import run_capped

_CHILD = """
import json, os
from gymforge.sandbox import Limits
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig

if not bwrap_works()[0]:
    print("skip")
    raise SystemExit(0)
limits = Limits(wall_time=6, cpu_time=4, memory_bytes=256 << 20, call_timeout=3.0)
backend = LocalBackend(workers=1, uid_base=100_000 + (os.getpid() % 5000) * 100 + UID_SLOT)
judge = CodeJudge(backend, JudgeConfig(limits=limits, stdio_limits=limits))
truth = {
    "kind": "humaneval",
    "entry_point": "digits",
    "prompt": 'def digits(n: int) -> int:\\n    \"\"\"How many digits n has.\"\"\"\\n',
    "test": json.loads(TEST),
}
try:
    for body in ("return len(str(n))", "return n"):
        v = judge.judge(truth, "```python\\ndef digits(n):\\n    " + body + "\\n```")
        print(v.passed, v.score, flush=True)
finally:
    backend.close()
"""


def judge_right_and_echo(test: str, uid_slot: int, cpu_limit_s: int = 30) -> tuple[str, str]:
    """The verdicts (``"passed score"``) of the right answer and of ``return n`` on a task
    checked by ``test`` (the calling test is skipped where bubblewrap is unavailable). The
    child is killed past ``cpu_limit_s`` seconds of CPU (both verdicts take well under one)."""
    code = _CHILD.replace("UID_SLOT", str(uid_slot)).replace("TEST", repr(json.dumps(test)))
    done = run_capped(code, cpu_limit_s)
    assert done.returncode == 0, done.stderr[-2000:]
    if done.stdout.strip() == "skip":
        pytest.skip("bubblewrap unavailable")
    right, echo = done.stdout.split("\n")[:2]
    return right, echo
