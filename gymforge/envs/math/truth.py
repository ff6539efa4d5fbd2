"""The hidden truth of a math task: the gold answer and, optionally, the form the prompt
demands and the tolerance for decimals against an irrational gold."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from gymforge.core.built import built

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


_FORMS: frozenset[str] = frozenset(get_args(Form))


def math_truth(answer: str, form: Form | None = None) -> MathTruth:
    """``MathTruth(answer=answer)``, or ``MathTruth(answer=answer, form=form)`` for a form:
    what a family builds. An answer of exactly ``str`` and a form of ``Form`` (or None) are
    what validation keeps as they are, so the model is built here as validation builds it
    (the other fields their defaults, unset); any other values are validated by the
    constructor (tests/envs/test_math_truth_fast_path.py)."""
    if type(answer) is str and (form is None or (type(form) is str and form in _FORMS)):
        fields = {"answer": answer, "form": form, "rel_tol": None, "reference_solution": None}
        return built(MathTruth, fields, {"answer"} if form is None else {"answer", "form"})
    return MathTruth(answer=answer) if form is None else MathTruth(answer=answer, form=form)
