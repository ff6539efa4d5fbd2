"""Attack: state a number scaled by a word the verifier takes for a description.

On a gold without a unit, words after a number that only say what was counted are ignored
(``252 \\text{ ways}``), and words that change the value fail (``5 \\text{ thousand}``). Scale
words missing from that list were read as descriptions: ``5 \\text{ lakh}`` (500,000),
``5 \\text{ crore}``, ``3 \\text{ tens}``, ``3 \\text{ bn}``, ``3 \\text{ reciprocal}`` were paid
for 5 and 3. Success would mean reward for an answer whose stated value is not the gold.
The defence: those words change the value (``words.CHANGES``), so the answer fails as
``unit_mismatch``; descriptive words are still ignored.
"""

from __future__ import annotations

import pytest

from gymforge.verify.math.equiv import is_equivalent

SCALED = ["5 \\text{ lakh}", "5 \\text{ crores}", "5 \\text{ tens}", "5 \\text{ bn}",
          "5 \\text{ mn}", "5 \\text{ reciprocal}", "5 \\text{ inverse}"]  # fmt: skip


@pytest.mark.parametrize("answer", SCALED)
def test_a_scale_word_is_not_a_description(answer: str) -> None:
    out = is_equivalent(answer, "5")
    assert not out.equal and out.reason == "unit_mismatch", (answer, out)


@pytest.mark.parametrize("answer", ["5 \\text{ ways}", "5 \\text{ different arrangements}"])
def test_descriptions_are_still_ignored(answer: str) -> None:
    assert is_equivalent(answer, "5").equal
