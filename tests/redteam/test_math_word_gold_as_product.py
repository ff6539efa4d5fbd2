"""Attack: answer a gold written as a plain word with an anagram of it.

A gold written without ``\\text{}`` (a plain dataset row answering ``Monday`` or
``No solution``) was read as LaTeX reads letters: a product of one-letter variables. Any
anagram was then the same product and was paid (``yadnoM``, ``dayMon``), while the right
answer written as text (``\\text{Monday}``, ``\\text{no solution}``) was silently unpaid.
Success would mean reward for a scrambled answer and none for the right one. The defence: a
gold made only of words, one of them four letters or longer and none a word the parser knows
(``sin``, ``pi``...), is read as text; short letter products (``abc``) stay algebra.
"""

from __future__ import annotations

import pytest

from gymforge.verify.math.equiv import is_equivalent

WRONG = [("yadnoM", "Monday"), ("dayMon", "Monday"), ("tulosnoi oN", "No solution"),
         ("\\text{Tuesday}", "Monday")]  # fmt: skip
RIGHT = [("\\text{Monday}", "Monday"), ("\\text{monday}", "Monday"), ("Monday", "Monday"),
         ("\\text{No solution}", "No solution"), ("\\textbf{no solution.}", "No solution"),
         ("cab", "abc"), ("2ab", "2ba")]  # fmt: skip


@pytest.mark.parametrize(("answer", "gold"), WRONG)
def test_a_scrambled_word_does_not_answer(answer: str, gold: str) -> None:
    assert not is_equivalent(answer, gold).equal, (answer, gold)


@pytest.mark.parametrize(("answer", "gold"), RIGHT)
def test_the_word_as_text_answers(answer: str, gold: str) -> None:
    assert is_equivalent(answer, gold).equal, (answer, gold)
