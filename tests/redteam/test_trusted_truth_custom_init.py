"""A truth model whose ``__init__`` fills or normalises fields (a family's own model: an
``answer`` derived from its ``parts`` unless given). pydantic runs a custom ``__init__`` on
``model_validate`` as on the constructor, so the defining path's truth holds what it sets;
``trusted`` built the model without it, so the truth the family wrote and scored with
lacked the derived value (and its fields set differed), while a replay that validates the
written truth would derive it. The attack holds when ``trusted`` gives what
``model_validate`` gives."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from gymforge.tasks.trusted import trusted


class _Derived(BaseModel):
    parts: list[int]
    answer: str = ""

    def __init__(self, **data: Any) -> None:
        data.setdefault("answer", str(sum(data["parts"])))
        super().__init__(**data)


def _seen(model: BaseModel) -> tuple[object, ...]:
    return (model.__dict__, model.model_fields_set, model.model_dump_json())


def test_a_model_with_its_own_init_is_built_as_validation_builds_it() -> None:
    validated = _Derived.model_validate({"parts": [1, 2]})
    assert validated.answer == "3"
    assert _seen(trusted(_Derived, parts=[1, 2])) == _seen(validated)
