"""``math.counting``: combinations (plain and with a condition), multiset arrangements,
balls in boxes, and subsets with no two consecutive elements. Every kind draws from a space
large enough that duplicates stay rare (the QA distribution audit bounds them)."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

from gymforge.envs.math.truth import MathTruth, math_truth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.draws import choice, randint

LETTERS = "ABCDEFGHKLMNPRSTUVWXYZ"
BOX = "Put the number in \\boxed{}."


def arrangements(word: str) -> int:
    """Distinct orderings of the letters of ``word`` (a multinomial coefficient)."""
    total = math.factorial(len(word))
    for c in Counter(word).values():
        total //= math.factorial(c)
    return total


def _choose(size: int, r: random.Random) -> tuple[str, int]:
    n = randint(r, size * 2, size * 12)
    k = randint(r, 2, n - 2)
    return f"In how many ways can a committee of {k} be chosen from {n} people?", math.comb(n, k)


def _mixed(size: int, r: random.Random) -> tuple[str, int]:
    men, women = randint(r, size, size * 5), randint(r, size, size * 5)
    k = randint(r, 2, min(men, women))
    return (
        f"A committee of {k} is chosen from {men} men and {women} women. In how many ways "
        "can it include at least one woman?",
        math.comb(men + women, k) - math.comb(men, k),
    )


def _anagram(size: int, r: random.Random) -> tuple[str, int]:
    alphabet = r.sample(LETTERS, randint(r, 3, 5))
    word = "".join(choice(r, alphabet) for _ in range(size + 3))
    return (
        f"How many distinct strings can be made by rearranging all the letters of {word}?",
        arrangements(word),
    )


def _balls(size: int, r: random.Random) -> tuple[str, int]:
    n, k = randint(r, size, size * 10), randint(r, 2, size + 4)
    return (
        f"In how many ways can {n} identical balls be put into {k} distinct boxes (boxes "
        "may stay empty)?",
        math.comb(n + k - 1, k - 1),
    )


def _no_adjacent(size: int, r: random.Random) -> tuple[str, int]:
    n = randint(r, size + 4, size * 12)
    k = randint(r, 2, max(2, (n + 1) // 2))
    # k-subsets of {1..n} with no two consecutive elements: C(n-k+1, k)
    return (
        f"How many {k}-element subsets of $\\{{1, 2, \\ldots, {n}\\}}$ contain no two "
        "consecutive integers?",
        math.comb(n - k + 1, k),
    )


KINDS = {
    "choose": _choose,
    "mixed": _mixed,
    "anagram": _anagram,
    "balls": _balls,
    "no_adjacent": _no_adjacent,
}


class CountingFamily(TaskFamily[MathTruth]):
    """Knobs: ``kind`` and ``size`` (how large the objects are)."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, MathTruth]:
        question, answer = KINDS[params["kind"]](params["size"], r)
        return f"{question} {BOX}", math_truth(str(answer))


FAMILY = CountingFamily(
    "math.counting",
    1,
    {
        1: ParamSpace({"kind": ChoiceKnob(("choose", "mixed")), "size": IntKnob(3, 6)}),
        2: ParamSpace({"kind": ChoiceKnob(("mixed", "anagram", "balls")), "size": IntKnob(5, 8)}),
        3: ParamSpace({"kind": ChoiceKnob(("anagram", "no_adjacent")), "size": IntKnob(7, 10)}),
    },
)
HELDOUT = {"no_adjacent": lambda p: p["kind"] == "no_adjacent" and p["size"] >= 9}
