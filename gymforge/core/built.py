"""``built``: a pydantic model instance made of field values already known to be valid, as
validation makes it, without validating them again. For the few hot constructors that
check their values' exact types first (``Verdict``'s, ``Task``'s, ``MathTruth``'s); each is
held equal to validation by a test."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_setattr = object.__setattr__
# BaseModel's own slots, set through their descriptors (as ``object.__setattr__`` finds them)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def built(model: type[M], fields: dict[str, Any], fields_set: set[str]) -> M:
    """A ``model`` holding ``fields`` (every field, in field order) with ``fields_set`` (a set
    of its own), no extras and no private values: what validation makes of values it keeps
    as they are, for a model without extras, private attributes, validators or an
    ``__init__`` of its own. The caller vouches for the values."""
    made = _new(model)
    _setattr(made, "__dict__", fields)
    _set_fields_set(made, fields_set)
    _set_extra(made, None)
    _set_private(made, None)
    return made
