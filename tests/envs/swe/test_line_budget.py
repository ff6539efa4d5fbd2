"""The line budget on mutated code (``repogen.outcome``) holds whatever else runs meanwhile.

Task generation runs each mutated function here, in this process, under a budget of lines.
A trace function that raises is switched off by CPython; when the line that ran out the
budget was not the mutant's own but a finaliser's (an object freed meanwhile, whose
``__del__`` runs Python code: an exception there is printed and ignored), the budget's
exception was swallowed and the mutant ran on untraced, forever. Full test runs grew a
worker to 22.5 GB while generating swe tasks (``test_swe_families.py``) and, another time,
past 8 GB with its main thread inside a mutant (``test_swe_qa.py``'s QA report).
"""

from __future__ import annotations

from collections import deque

from gymforge.envs.swe.repogen import UNBOUNDED, Unit, load, outcome

SPIN = "def spin(box, n):\n    while n:\n        n -= 1\n        if box:\n            box.pop()\n"


class Heavy:
    """Runs many lines of Python when freed, as a finaliser elsewhere in the process may."""

    def __del__(self) -> None:
        total = 0
        for i in range(200):
            total += i


def test_a_finaliser_running_out_the_budget_does_not_switch_it_off() -> None:
    spin = load([Unit("m", "spin", SPIN)])["m.spin"]
    for budget in (1_000, 5_000, 20_000):
        box = deque(Heavy() for _ in range(10_000))  # freed one by one inside the mutant
        assert outcome(spin, [box, 3_000_000], budget) == UNBOUNDED, budget


def test_the_budget_counts_the_mutants_lines_only() -> None:
    """The same call gives the same outcome whether or not finalisers run inside it."""
    spin = load([Unit("m", "spin", SPIN)])["m.spin"]
    for budget, want in ((3_000, UNBOUNDED), (4_500, None)):  # about 4,000 lines of its own
        quiet = outcome(spin, [deque([0] * 100), 1_000], budget)
        noisy = outcome(spin, [deque(Heavy() for _ in range(100)), 1_000], budget)
        assert quiet == noisy == want, budget
