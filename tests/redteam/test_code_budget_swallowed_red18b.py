"""Attack on the code judge: a check that swallows the line budget's exception runs on unbounded.

The real check runs under a budget of executed lines of test code (``budget.line_budget``):
past it, the trace function raises ``OverBudget`` in the check. But CPython turns tracing off
for the thread once a trace function raises, and a check with a bare ``except:`` (or
``except BaseException``, or a ``finally``, or a ``with`` whose ``__exit__`` swallows) catches
it: from there on the check runs untraced, as long as the answer's value says. A check that
retries after any error, around a loop over ``candidate(10**12)``, held the judge's process
at full CPU (killed at the test's CPU limit) for ``return n``. Success is the judge not
returning; the defence: every handler, ``finally`` and ``with`` of the dataset's code
re-raises ``OverBudget`` once the budget is spent, so the check stops and the answer fails.
"""

from __future__ import annotations

import pytest
from judged_digits import judge_right_and_echo

from gymforge.verify.code.budget import OverBudget, line_budget
from gymforge.verify.code.checks import _compiled, check_namespace

CHECK = (
    "def check(candidate):\n"
    "    total = 0\n"
    "    n = candidate(10**12)\n"
    "    while total < n:  # count on after any error\n"
    "        try:\n"
    "            for _ in range(n - total):\n"
    "                total += 1\n"
    "        except:\n"
    "            pass\n"
    "    assert total == 13\n"
    "    assert candidate(5) == 1\n"
    "    assert candidate(12345) == 5\n"
)


def test_a_check_swallowing_the_budget_cannot_hold_the_judge() -> None:
    assert judge_right_and_echo(CHECK, uid_slot=63) == ("True 1.0", "False 0.0")


SWALLOWERS = {
    "bare_except": "    try:\n        spin()\n    except:\n        pass\n",
    "base_exception": "    try:\n        spin()\n    except BaseException:\n        pass\n",
    "finally": "    try:\n        spin()\n    finally:\n        spin()\n",
    "with_that_swallows": "    with Quiet():\n        spin()\n",
}
MODULE = (
    "class Quiet:\n"
    "    def __enter__(self):\n        return self\n"
    "    def __exit__(self, *a):\n        return True\n"
    "TURNS = 0\n"
    "def spin():\n    global TURNS\n    i = 0\n"
    "    while i < 20_000_000:\n        i += 1\n        TURNS += 1\n"
    "def check():\n"
)


@pytest.mark.parametrize("how", sorted(SWALLOWERS))
def test_the_budget_outlives_a_handler_that_swallows_it(how: str) -> None:
    src = MODULE + SWALLOWERS[how] + "    spin()\n    spin()\n    return 'ran on'\n"
    ns, _ = check_namespace({"kind": "humaneval", "prompt": ""})  # the check's namespace
    exec(_compiled(src, "<humaneval test>"), ns)  # our own test code
    with pytest.raises(OverBudget), line_budget(10_000):
        ns["check"]()  # type: ignore[operator]
    assert ns["TURNS"] < 10_000  # a finally's spin, untraced, would count to 20 million
