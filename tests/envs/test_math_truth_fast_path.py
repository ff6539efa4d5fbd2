"""``math_truth`` held equal to the validating ``MathTruth`` constructor, and every math
family's tasks (every version, level and many seeds) equal to those built with the
validating constructors of their truth and their ``Task``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.seeding import canonical_json
from gymforge.core.types import Task
from gymforge.envs.math import counting, latex, linear, roots
from gymforge.envs.math.env import MODULES
from gymforge.envs.math.truth import MathTruth, math_truth
from gymforge.tasks import family as family_module
from gymforge.tasks.truth import vouched


class Text(str):
    """A ``str`` subclass: validation turns it into a plain ``str``."""


_ANSWERS = st.text(max_size=4) | st.builds(Text, st.text(max_size=3)) | st.integers() | st.none()
_FORMS = st.sampled_from(["integer", "reduced_fraction", "simplest_radical", "decimal", ""])


@given(answer=_ANSWERS, form=st.none() | _FORMS | _FORMS.map(Text) | st.integers())
def test_math_truth_is_the_validating_constructor(answer: Any, form: Any) -> None:
    def want() -> MathTruth:
        return MathTruth(answer=answer) if form is None else MathTruth(answer=answer, form=form)

    try:
        expected = want()
    except ValueError as err:
        with pytest.raises(type(err)):
            math_truth(answer, form)
        return
    got = math_truth(answer, form)
    assert type(got) is MathTruth
    assert list(got.__dict__.items()) == list(expected.__dict__.items())
    assert [type(v) for v in got.__dict__.values()] == [type(v) for v in expected.__dict__.values()]
    assert got.model_fields_set == expected.model_fields_set
    assert (got.__pydantic_extra__, got.__pydantic_private__) == (None, None)
    assert got.model_dump_json(exclude_unset=True) == expected.model_dump_json(exclude_unset=True)


def _validated_truth(answer: Any, form: Any = None) -> MathTruth:
    return MathTruth(answer=answer) if form is None else MathTruth(answer=answer, form=form)


def _validated_task(*values: Any) -> Task:
    names = ("task_id", "family", "prompt", "truth", "params", "difficulty")
    return Task(**dict(zip(names, values, strict=True)))


def _tasks() -> list[tuple[Task, Any]]:
    out = []
    for module in MODULES:
        for family in (module.FAMILY, *module.FAMILY.older.values()):
            for level in family.levels:
                for seed in range(25):
                    task = family.task(level, seed)
                    out.append((task, vouched(task)))
    return out


def test_math_tasks_are_the_ones_validation_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _tasks()
    for module in (latex, counting, linear, roots):
        monkeypatch.setattr(module, "math_truth", _validated_truth)
    monkeypatch.setattr(family_module, "task_of", _validated_task)
    slow = _tasks()
    assert len(fast) == len(slow) > 400
    for (got, got_truth), (want, want_truth) in zip(fast, slow, strict=True):
        assert canonical_json(got.model_dump()) == canonical_json(want.model_dump())
        assert got.model_fields_set == want.model_fields_set
        assert got_truth == want_truth and got_truth is not None
        assert got_truth.model_fields_set == want_truth.model_fields_set
