"""Puzzle datasets: outside tasks as JSONL rows, judged by the families' own checkers.

One row per line, pinned by the file's content hash like every gymforge dataset::

    {"task_id"?: str, "family": "countdown", "question": str, "answer": str, ...fields}

- ``family``: ``countdown``, ``sudoku``, ``knights_knaves``, ``shortest_path`` or
  ``coloring`` (``puzzles.`` prefix optional);
- ``question``: shown to the agent as written, followed by the family's answer-format
  paragraph (``Answer: ...`` as the final line; a sudoku grid may follow on its own lines);
- ``answer``: a reference solution. It must pass the family's checker through the same
  extraction a reply goes through (it is the oracle's reply), so a row whose stated answer
  is wrong is refused instead of silently making a task nobody can pass;
- the family's fields, which the checker reads (documented in ``docs/puzzles.md`` and in
  each family's ``from_row``).

A bad row (not JSON, a missing or ill-typed field, an unknown family, a reference answer
that fails) is reported as one ``file:line: problem`` in ``Dataset.errors``, and every other
row is still loaded and graded. Rows are judged by each family's current version.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gymforge.envs.puzzles.families import family_named
from gymforge.tasks.dataset import Dataset, load_jsonl
from gymforge.verify.puzzles.answer import answer_instruction, extract_answer
from gymforge.verify.puzzles.base import PuzzleTruth


class PuzzleRow(BaseModel):
    """A puzzle dataset row; family-specific fields are kept as extras."""

    model_config = ConfigDict(extra="allow")

    task_id: str | None = Field(default=None, min_length=1, max_length=500)
    family: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)


def row_to_task(row: BaseModel) -> tuple[str, PuzzleTruth]:
    """``(prompt, truth)`` of one row; ValueError saying what is wrong with it."""
    assert isinstance(row, PuzzleRow)
    family = family_named(row.family)
    fields = dict(row.model_extra or {})
    try:
        own = family.from_row(fields)
    except (KeyError, TypeError, IndexError) as err:
        raise ValueError(f"bad {family.name} fields: {type(err).__name__}: {err}") from err
    truth = own.model_copy(update={"row_family": family.name, "reference": row.answer})
    form, example = family.answer_form(truth)
    instruction = answer_instruction(form, example, family.multiline())
    prompt = f"{row.question.rstrip()}\n\n{instruction}"
    reply = f"Answer: {row.answer}"
    answer, problem = extract_answer(reply, family.multiline())
    outcome = problem if answer is None else family.check(truth, answer)
    assert outcome is not None
    if not outcome.passed:
        facts = ", ".join(f"{k}={v}" for k, v in outcome.facts.items())
        raise ValueError(
            f"the row's answer fails the {family.name} checker: {outcome.reason}"
            + (f" ({facts})" if facts else "")
        )
    return prompt, truth


def load_puzzles(path: str | Path, name: str | None = None) -> Dataset:
    """Load a puzzle dataset; bad rows go to ``Dataset.errors``, the rest loads."""
    return load_jsonl(path, name=name, row_model=PuzzleRow, to_task=row_to_task, strict=False)
