"""The published shapes of math datasets, read as they are.

A file is read in one shape, decided by its first row (``detect``):

- **MATH** (hendrycks/MATH, MATH-500): ``problem`` and ``solution``, and no ``question``.
  The gold is ``answer`` when the row has one, else the last ``\\boxed{}`` of ``solution``.
- **GSM8K** (openai/grade-school-math): ``question`` and an ``answer`` that is the worked
  solution ending in a line ``#### N``. The gold is ``N`` (thousands commas dropped).
- **plain** (gymforge's own): ``question`` and ``answer``, the answer being the gold itself.

In every shape the worked solution, when there is one, is kept as the task's
``reference_solution``, and a row whose gold cannot be read as an answer at all (no ``####``
number, no box, a gold that is a whole rationale) is refused with its ``file:line``: a task
nobody could pass is never made silently.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from gymforge.envs.math.truth import Form, MathTruth
from gymforge.tasks.dataset import MathRow, RowShape
from gymforge.verify.math.extract import boxed_contents, precheck
from gymforge.verify.math.text import blank_gold

_HASHES = re.compile(r"^[ \t]*####[ \t]*(.*?)[ \t]*$", re.M)
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:/\d+)?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def gsm8k_gold(rationale: str) -> str:
    """The number after the last ``####`` line (``#### 1,234`` -> ``1234``). ValueError
    when there is no such line or what follows is not a number."""
    found = _HASHES.findall(rationale)
    if not found:
        raise ValueError("no final '#### N' line (the file is read as GSM8K)")
    text = _THOUSANDS.sub("", found[-1]).strip().strip("$").strip().rstrip(".").strip()
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"'#### {found[-1][:60]}' is not a number")
    return text


def math_gold(solution: str, answer: str | None) -> str:
    """``answer`` when given, else the last ``\\boxed{}`` of ``solution``. ValueError when
    there is neither, or the box is empty."""
    if answer is not None and answer.strip():
        return _checked(answer.strip())
    boxes = boxed_contents(solution)
    if not boxes or not boxes[-1].strip():
        raise ValueError("no final \\boxed{} answer, and the row has no 'answer'")
    return _checked(boxes[-1].strip())


def _checked(gold: str) -> str:
    why = precheck(gold)
    if why is None and blank_gold(gold):
        why = "it has no content (nothing to answer)"
    if why is not None:
        raise ValueError(f"gold answer is not gradable: {why}")
    return gold


class _Options(BaseModel):
    """What every shape may add: ``form``, ``rel_tol`` (see ``MathTruth``)."""

    model_config = ConfigDict(extra="allow")

    task_id: str | None = Field(default=None, min_length=1, max_length=500)
    form: Form | None = None
    rel_tol: float | None = Field(default=None, ge=0.0, le=0.1)


class MathDatasetRow(MathRow):
    """A plain row: ``answer`` is the gold itself; ``form`` (the answer form the question
    demands) and ``rel_tol`` (the tolerance for decimals against an irrational gold) are
    optional."""

    form: Form | None = None
    rel_tol: float | None = Field(default=None, ge=0.0, le=0.1)

    @field_validator("answer")
    @classmethod
    def _not_a_rationale(cls, v: str) -> str:
        if _HASHES.search(v):
            raise ValueError(
                "holds a '#### N' line (a GSM8K rationale), but the file's first row was "
                "read as a plain gold answer; give the file in one shape"
            )
        return _checked(v)


class GSM8KRow(_Options):
    """``question``; ``answer``: the worked solution ending in ``#### N``."""

    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)

    @field_validator("answer")
    @classmethod
    def _has_gold(cls, v: str) -> str:
        gsm8k_gold(v)
        return v


class MATHRow(_Options):
    """``problem``; ``solution`` with a final ``\\boxed{}``; ``answer`` optional."""

    problem: str = Field(min_length=1)
    answer: str | None = None  # before solution: its validator reads it
    solution: str = Field(min_length=1)

    @field_validator("solution")
    @classmethod
    def _has_gold(cls, v: str, info: ValidationInfo) -> str:
        math_gold(v, info.data.get("answer"))
        return v


def _truth(row: _Options | MathDatasetRow, gold: str, reference: str | None) -> MathTruth:
    given: dict[str, Any] = {"answer": gold, "form": row.form, "rel_tol": row.rel_tol,
                             "reference_solution": reference}  # fmt: skip
    return MathTruth.model_validate({k: v for k, v in given.items() if v is not None})


def _plain_task(row: BaseModel) -> tuple[str, MathTruth]:
    assert isinstance(row, MathDatasetRow)
    return row.question, _truth(row, row.answer, None)


def _gsm8k_task(row: BaseModel) -> tuple[str, MathTruth]:
    assert isinstance(row, GSM8KRow)
    return row.question, _truth(row, gsm8k_gold(row.answer), row.answer)


def _math_task(row: BaseModel) -> tuple[str, MathTruth]:
    assert isinstance(row, MATHRow)
    return row.problem, _truth(row, math_gold(row.solution, row.answer), row.solution)


PLAIN = RowShape("plain", "read as plain rows: gold is 'answer'", MathDatasetRow, _plain_task)
GSM8K = RowShape("gsm8k", "read as GSM8K: gold after ####", GSM8KRow, _gsm8k_task)
MATH = RowShape("math", "read as MATH: gold is 'answer', else the last \\boxed{} of 'solution'",
                MATHRow, _math_task)  # fmt: skip
SHAPES = (PLAIN, GSM8K, MATH)


def detect(first: dict[str, Any]) -> RowShape:
    """The shape of a file, from its first row (see the module docstring)."""
    if "question" not in first and "problem" in first and "solution" in first:
        return MATH
    answer = first.get("answer")
    if "question" in first and isinstance(answer, str) and _HASHES.search(answer):
        return GSM8K
    return PLAIN
