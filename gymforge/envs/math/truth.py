"""The hidden truth of a math task: the gold answer and, optionally, the form the prompt
demands and the tolerance for decimals against an irrational gold."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Form = Literal["integer", "reduced_fraction", "simplest_radical"]


class MathTruth(BaseModel):
    """``form``, ``rel_tol`` and ``reference_solution`` (a dataset row's worked solution,
    e.g. a GSM8K rationale; never shown to the model) are absent from ``Task.truth`` unless
    a task sets them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str
    form: Form | None = None
    rel_tol: float | None = None
    reference_solution: str | None = None
