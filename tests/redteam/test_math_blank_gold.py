"""Attack: answer a published row whose gold is blank with a box holding no value.

Published math data has rows whose answer is empty or only LaTeX spacing (gaokao2023en has
rows answered ``$$``; a MATH-shaped row may box ``\\text{ }``). Such a gold was loaded, read
as an empty text, and every answer without a letter or a digit matched it:
``\\boxed{-}`` was paid for ``$ $``. Success would mean reward without an answer on every
such task, and no sign that the row could never be graded. The defence: a gold with no
content is refused, by the dataset loader with its ``file:line`` and by the verifier
(``ValueError``); the worker's comparison never calls a blank gold equal to anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gymforge.core.errors import ConfigError
from gymforge.envs.math.env import MathEnv
from gymforge.verify.math import MathVerifier
from gymforge.verify.math.equiv import is_equivalent

BLANK = ["$ $", "$$", "\\text{ }", "\\text{}", "{}", "\\quad", "\\boxed{}", "$\\,$", "\\mbox{~}"]


@pytest.mark.parametrize("gold", BLANK)
def test_a_blank_gold_equals_nothing(gold: str) -> None:
    for answer in ("-", "()", gold, "\\text{ }", "."):
        assert not is_equivalent(answer, gold).equal, (answer, gold)


@pytest.mark.parametrize("gold", BLANK)
def test_a_blank_gold_is_refused_by_the_verifier(gold: str) -> None:
    with pytest.raises(ValueError, match="no content"):
        MathVerifier().verify("\\boxed{-}", gold)


@pytest.mark.parametrize("gold", ["$ $", "\\text{ }", "\\boxed{}"])
def test_a_blank_gold_row_is_refused_with_its_line(tmp_path: Path, gold: str) -> None:
    plain = tmp_path / "p.jsonl"
    rows = [{"question": "2+2?", "answer": "4"}, {"question": "q?", "answer": gold}]
    plain.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError, match=r"p\.jsonl:2: answer: .*no content"):
        MathEnv().load_dataset(plain)
    math = tmp_path / "m.jsonl"
    math.write_text(json.dumps({"problem": "q?", "solution": f"so \\boxed{{{gold}}}"}) + "\n")
    with pytest.raises(ConfigError, match=r"m\.jsonl:1: solution: .*no content"):
        MathEnv().load_dataset(math)


def test_golds_with_content_still_load_and_grade(tmp_path: Path) -> None:
    rows = [{"question": "q?", "answer": g} for g in ("\\{\\}", "\\emptyset", "\\text{(C)}", "0")]
    path = tmp_path / "ok.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(MathEnv().load_dataset(path).tasks) == 4
    assert is_equivalent("\\varnothing", "\\{\\}").equal
    assert is_equivalent("C", "\\text{(C)}").equal
