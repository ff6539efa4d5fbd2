"""``dump_truth`` equals ``model_dump(by_alias=True, exclude_unset=True)`` for a truth model
an author declares with serialisation of its own inside a field's type: an annotated
serialiser on the field or deeper in its type, or a field excluded by a condition. Its
shortcuts handed such fields on as the model holds them (``{"x": 2}`` for a serialiser
that writes ``4``), so the task's written truth was not what the model dumps."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field, PlainSerializer, WrapSerializer

from gymforge.tasks.truth_dump import dump_truth

Doubled = Annotated[int, PlainSerializer(lambda v: v * 2)]
Wrapped = Annotated[int, WrapSerializer(lambda v, handler: handler(v) + 1)]


class OnField(BaseModel):
    x: Doubled


class Deeper(BaseModel):
    xs: list[Doubled]
    pairs: dict[str, Wrapped]


class Optional_(BaseModel):
    x: Doubled | None = None


class Aliased(BaseModel):
    x: Doubled = Field(alias="X")


class ExcludedIf(BaseModel):
    x: int = Field(0, exclude_if=lambda v: v == 0)
    y: int = 1


class Inner(BaseModel):
    x: Doubled


class Outer(BaseModel):
    inner: Inner
    inners: list[Inner]


@pytest.mark.parametrize(
    "truth",
    [
        OnField(x=2),
        Deeper(xs=[1, 2], pairs={"a": 1}),
        Optional_(x=3),
        Aliased(X=2),
        ExcludedIf(x=0, y=2),
        Outer(inner=Inner(x=1), inners=[Inner(x=2)]),
    ],
    ids=lambda t: type(t).__name__,
)
def test_a_model_that_serialises_its_fields_is_dumped_as_pydantic_dumps_it(
    truth: BaseModel,
) -> None:
    expected = truth.model_dump(by_alias=True, exclude_unset=True)
    assert dump_truth(truth) == expected
    assert dump_truth(truth) == expected  # the layout is kept: the second dump takes it
