"""Attack on the judge's chance level: a check whose loop runs as long as the answer says.

The chance level of a HumanEval or MBPP task runs the task's own check in the judge against
stand-in answers (constants, echoed arguments, one builtin step on them). A check that
loops over what the candidate returns (``for _ in range(candidate(10**12))``, 13 turns for
a right answer) is bounded by a real answer's size, not by a stand-in's: the echoed
argument made the loop run for hours, holding the judge in an honest run, at the first
answer to that task. The defence: each stand-in's check runs under a budget of executed
lines; past it the stand-in passes nothing, and the level comes from the others.
"""

from __future__ import annotations

from cpu_capped import run_capped

CPU_LIMIT_S = 20  # the bounded computation takes well under a second

CHILD = """
from gymforge.verify.code.chance import chance
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
print(round(chance(truth), 3))
"""


def test_the_chance_level_of_a_check_looping_on_the_answer_is_bounded() -> None:
    done = run_capped(CHILD, CPU_LIMIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) < 1.0  # no stand-in counts digits
