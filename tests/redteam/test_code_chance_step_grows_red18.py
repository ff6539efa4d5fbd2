"""Attack on the chance level: a check that feeds the answer its own result.

The level partial credit is measured above runs the task's check in the judge against
stand-ins, among them one builtin step on the argument (``x ** 2``, ``x * 2``, ``a + b``).
A check that iterates the answer on its own output (a generator's step function: ``x =
candidate(x)`` 64 times, each result checked) let ``x ** 2`` square its value 64 times in
C, where the budget of executed lines sees nothing: 2**64 bits, the judge's process at full
CPU and growing memory at the first answer to the task, whatever the answer. The defence: a
stand-in's step that would return a value past a size bound (an int of more than 2**16
bits, more than 100,000 items) fails that call instead.
"""

from __future__ import annotations

from cpu_capped import run_capped

CPU_LIMIT_S = 20

CHILD = """
from gymforge.verify.code.chance import chance
truth = {
    "kind": "humaneval",
    "entry_point": "step",
    "prompt": "def step(x: int) -> int:\\n    \\"\\"\\"The generator's next value.\\"\\"\\"\\n",
    "test": (
        "def check(candidate):\\n"
        "    x = 7\\n"
        "    for _ in range(64):\\n"
        "        y = candidate(x)\\n"
        "        assert y % 2**31 == (1103515245 * (x % 2**31) + 12345) % 2**31\\n"
        "        x = y\\n"
    ),
}
pairs = dict(truth, entry_point="grow", test=(
    "def check(candidate):\\n"
    "    x = [1, 2]\\n"
    "    for _ in range(64):\\n"
    "        y = candidate(x, x)\\n"
    "        assert y == x + [len(x)]\\n"
    "        x = y\\n"
))
print(round(chance(truth), 3), round(chance(pairs), 3))
"""


def test_the_level_of_a_check_iterating_the_answer_is_bounded() -> None:
    done = run_capped(CHILD, CPU_LIMIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    levels = [float(x) for x in done.stdout.split()]
    assert all(level < 1.0 for level in levels)
