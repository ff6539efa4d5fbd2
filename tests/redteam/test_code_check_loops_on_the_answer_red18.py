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

from judged_digits import judge_right_and_echo

CHECK = (
    "def check(candidate):\n"
    "    total = 0\n"
    "    for _ in range(candidate(10**12)):\n"
    "        total += 1\n"
    "    assert total == 13\n"
    "    assert candidate(5) == 1\n"
    "    assert candidate(12345) == 5\n"
)


def test_a_check_looping_on_the_answer_cannot_hold_the_judge() -> None:
    assert judge_right_and_echo(CHECK, uid_slot=61) == ("True 1.0", "False 0.0")
