"""A task ``TaskFamily.generate`` builds from params given without a task id carries an id
that regenerates it: the id names those params (``variant_id``). Before, it carried the
plain id of its level and seed (``family/vN/dL/sS``), which regenerates the task of the
params drawn for that seed: a run, a replay or a served session given that id played
another task than the one generated."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gymforge.core.errors import UnknownTaskError
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.tasks.truth import AnswerTruth


class Sum(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        a, b = params["a"], params["b"] + r.randint(0, 3)
        return f"{a} + {b}?", AnswerTruth(answer=str(a + b))


FAMILY = Sum("sum", 2, {1: ParamSpace({"a": IntKnob(0, 9), "b": IntKnob(0, 9)})})
SOURCE = TaskSource.of([FAMILY])


@pytest.mark.parametrize("seed", [0, 7, 2**40])
def test_a_task_generated_from_given_params_is_the_task_its_id_names(seed: int) -> None:
    drawn = FAMILY.params_for(1, seed)
    given = {"a": (drawn["a"] + 1) % 10, "b": drawn["b"]}  # not the draw
    task = FAMILY.generate(given, seed)
    assert task.params == given
    assert task.task_id == FAMILY.variant_id(given, seed)
    again = SOURCE.resolve(task.task_id)
    assert again.params == given and again.truth == task.truth and again.prompt == task.prompt


def test_the_drawn_params_keep_the_plain_id() -> None:
    task = FAMILY.task(1, 5)
    assert task.task_id == "sum/v2/d1/s5"
    assert FAMILY.generate(dict(task.params), 5, task.task_id) == task


def test_params_outside_every_level_are_refused() -> None:
    with pytest.raises((ValueError, UnknownTaskError)):
        FAMILY.generate({"a": 99, "b": 1}, 3)


class Fixed(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        return "q", AnswerTruth(answer=str(r.randint(0, 99)))


def test_a_family_without_knobs_keeps_the_plain_id() -> None:
    """No params to name: the plain id, which resolves (an id ending in ``/`` does not)."""
    family = Fixed("fixed", 1, {1: ParamSpace({})})
    task = family.generate({}, 3)
    assert task.task_id == "fixed/v1/d1/s3"
    assert TaskSource.of([family]).resolve(task.task_id) == task
