"""Red team 9: a task generated from given params (no task id) carries an id that resolves
back to an equal task, or, where it cannot, the id is refused loudly (UnknownTaskError),
never silently resolved to another task."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gymforge.core.errors import UnknownTaskError
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.tasks.truth import AnswerTruth


class Echo(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        text = repr(sorted(params.items())) + str(r.randint(0, 10**6))
        return text, AnswerTruth(answer=text)


ODD = (
    3, 3.0, True, None, 0.1, -0.0, 1e300, "é ü", "a=b", "", "x\ny", [1], {"k": 1}, 2**70,
)  # fmt: skip
FAMILY = Echo("echo", 1, {1: ParamSpace({"v": ChoiceKnob(ODD), "n": IntKnob(0, 9)})})
LOUD = ("a,b", "a/b", [1, 2], {"k": 1, "j": 2})
LOUD_FAMILY = Echo("loud", 1, {1: ParamSpace({"v": ChoiceKnob(LOUD)})})
EMPTY = Echo("empty", 1, {1: ParamSpace({})})
SOURCE = TaskSource.of([FAMILY, LOUD_FAMILY, EMPTY])


@pytest.mark.parametrize("value", ODD, ids=repr)
@pytest.mark.parametrize("seed", [0, 5, 2**63])
def test_generated_ids_round_trip(value: Any, seed: int) -> None:
    params = {"v": value, "n": 4}
    task = FAMILY.generate(params, seed)
    assert task.task_id == FAMILY.variant_id(params, seed)
    again = SOURCE.resolve(task.task_id)
    assert (again.prompt, again.truth, again.params) == (task.prompt, task.truth, task.params)
    assert {k: type(v) for k, v in again.params.items()} == {
        k: type(v) for k, v in task.params.items()
    }


@pytest.mark.parametrize("value", LOUD, ids=repr)
def test_ids_that_cannot_round_trip_are_refused_loudly(value: Any) -> None:
    task = LOUD_FAMILY.generate({"v": value}, 3)
    try:
        again = SOURCE.resolve(task.task_id)
    except UnknownTaskError:
        return
    assert (again.prompt, again.truth, again.params) == (task.prompt, task.truth, task.params)


def test_a_family_without_knobs_generates_an_id_that_resolves() -> None:
    """A level with no knobs: its only params are ``{}``; the generated task's id must
    resolve (before this change it was the plain ``empty/v1/d1/s3``, which did)."""
    task = EMPTY.generate({}, 3)
    again = SOURCE.resolve(task.task_id)
    assert (again.prompt, again.truth, again.params) == (task.prompt, task.truth, task.params)


def test_key_order_does_not_change_the_id_or_task() -> None:
    a = FAMILY.generate({"v": 3, "n": 1}, 9)
    b = FAMILY.generate({"n": 1, "v": 3}, 9)
    assert a.task_id == b.task_id and a.prompt == b.prompt


@pytest.mark.parametrize("seed", [-1])
def test_a_negative_seed_id_is_refused_loudly(seed: int) -> None:
    task = FAMILY.generate({"v": 3, "n": 1}, seed)
    with pytest.raises(UnknownTaskError):
        SOURCE.resolve(task.task_id)


def test_params_outside_every_level_are_refused() -> None:
    with pytest.raises((ValueError, UnknownTaskError)):
        FAMILY.generate({"v": 3, "n": 99}, 1)
    with pytest.raises((ValueError, UnknownTaskError)):
        FAMILY.generate({"v": 3, "n": 1, "extra": 0}, 1)
