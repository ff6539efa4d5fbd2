"""Attack on the code judge: a check whose loop runs as long as the answer says, judged for real.

A HumanEval or MBPP check runs in the judge's process, the candidate in the sandbox. A check
that loops over what the candidate returns (``for _ in range(candidate(10**12))``, 13 turns
for a right answer) is bounded by the answer, not by the judge: the chance level's stand-ins
ran under a budget of executed lines (``test_code_chance_loops_on_a_stand_in.py``), the real
check did not, so ``return n`` held the judge's process at full CPU for as long as it liked
(killed at the test's CPU limit). Success would be the judge not returning; the defence: the
real check runs under a budget of executed lines of test code too, and an answer that drives
it past the budget fails (the check is stopped: no partial credit).
"""

from __future__ import annotations

from cpu_capped import run_capped

CPU_LIMIT_S = 30  # both verdicts take well under a second of the judge's CPU

CHILD = """
import os
from gymforge.sandbox import Limits
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig

if not bwrap_works()[0]:
    print("skip")
    raise SystemExit(0)
limits = Limits(wall_time=6, cpu_time=4, memory_bytes=256 << 20, call_timeout=3.0)
backend = LocalBackend(workers=1, uid_base=100_000 + (os.getpid() % 5000) * 100 + 61)
judge = CodeJudge(backend, JudgeConfig(limits=limits, stdio_limits=limits))
truth = {
    "kind": "humaneval",
    "entry_point": "digits",
    "prompt": "def digits(n: int) -> int:\\n    \\"\\"\\"How many digits n has.\\"\\"\\"\\n",
    "test": (
        "def check(candidate):\\n"
        "    total = 0\\n"
        "    for _ in range(candidate(10**12)):\\n"
        "        total += 1\\n"
        "    assert total == 13\\n"
        "    assert candidate(5) == 1\\n"
        "    assert candidate(12345) == 5\\n"
    ),
}
try:
    for body in ("return len(str(n))", "return n"):
        v = judge.judge(truth, "```python\\ndef digits(n):\\n    " + body + "\\n```")
        print(v.passed, v.score, flush=True)
finally:
    backend.close()
"""


def test_a_check_looping_on_the_answer_cannot_hold_the_judge() -> None:
    done = run_capped(CHILD, CPU_LIMIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    if done.stdout.strip() == "skip":
        return
    right, echo = done.stdout.split("\n")[:2]
    assert right == "True 1.0"
    assert echo == "False 0.0"
