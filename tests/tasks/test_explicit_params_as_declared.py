"""A task id's explicit params reach the family's ``build`` as the values its knobs declare.

``ChoiceKnob`` accepts a value equal to one of its own (``3.0`` for ``3``, ``1`` for
``1.0``), so a hand-written task id such as ``puzzles.coloring/v2/d1/s5/colors=3.0,...``
names a task. Its generator was handed the float: ``random.randint(1, 3.0)`` is a
DeprecationWarning on Python 3.11 and a TypeError on 3.12, and a float in a ``range``
fails at once. The task id and its params stay as given (they seed the task); ``build``
gets the knob's own value of the same worth.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest

from gymforge.registry.handle import task_source
from gymforge.registry.resolve import make_env
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.truth import AnswerTruth


class Typed(TaskFamily[AnswerTruth]):
    """Records the params its ``build`` is handed, with their types."""

    seen: list[list[tuple[str, Any, type]]] = []

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        Typed.seen.append(sorted((k, v, type(v)) for k, v in params.items()))
        return "q", AnswerTruth(answer=str(sorted(params.items())))


LEVELS = {
    1: ParamSpace({"n": IntKnob(0, 4), "k": ChoiceKnob((2, 3, 0.5, "a", 1, True))}),
}


@pytest.mark.parametrize(
    ("k", "declared"),
    [(3.0, 3), (3, 3), (0.5, 0.5), (True, True), (1, 1), (1.0, 1), ("a", "a")],
)
def test_build_gets_the_knobs_own_value(k: Any, declared: Any) -> None:
    family = Typed("typed", 1, LEVELS)
    Typed.seen.clear()
    task = family.generate({"n": 2, "k": k}, 7)
    assert Typed.seen == [[("k", declared, type(declared)), ("n", 2, int)]]
    assert task.params == {"n": 2, "k": k}  # the id's params, as given
    assert type(task.params["k"]) is type(k)


@pytest.mark.parametrize(
    ("env_id", "task_id"),
    [
        ("puzzles", 'puzzles.coloring/v2/d1/s5/colors=3.0,density=40,naming="letters",nodes=6'),
        ("puzzles", 'puzzles.coloring/v2/d1/s5/colors=3,density=40.0,naming="letters",nodes=6'),
        ("expenses", "expenses.batch/v1/d1/s5/"
         'currency_mix="domestic",fault_rate=0.0,page_size=10.0,reports=30'),
    ],
)  # fmt: skip
def test_a_float_for_an_int_choice_is_no_warning(env_id: str, task_id: str) -> None:
    source = task_source(make_env(env_id))
    assert source is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        task = source.families[task_id.split("/")[0]].resolve(task_id)
    assert task.task_id == task_id
