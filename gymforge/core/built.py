"""``built``: a pydantic model instance made of field values already known to be valid, as
validation makes it, without validating them again. For the hot constructors that check
their values first: ``Verdict``'s, ``Task``'s and ``MathTruth``'s (each held equal to
validation by a test), and a family's ``trusted`` truth (``gymforge.tasks.trusted``)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

_new = object.__new__
_setattr = object.__setattr__
# BaseModel's own slots, set through their descriptors (as ``object.__setattr__`` finds them)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def built(model: type[M], fields: dict[str, Any], fields_set: set[str], root: bool = False) -> M:
    """A ``model`` holding ``fields`` (every field, in field order) with ``fields_set``, no
    extras and no private values (a root model, ``root``, keeps neither slot): what
    validation makes of values it keeps as they are, for a model without extras, private
    attributes, validators or an ``__init__`` of its own. The caller vouches for the
    values."""
    made = _new(model)
    _setattr(made, "__dict__", fields)
    _set_fields_set(made, fields_set)
    if not root:
        _set_extra(made, None)
        _set_private(made, None)
    return made


def str_keyed(value: Any) -> bool:
    """Whether ``value`` is exactly a ``dict`` whose keys are exactly ``str``: a
    ``dict[str, Any]`` field that validation keeps as it is (copied)."""
    return type(value) is dict and set(map(type, value)) <= _STR


_STR = frozenset({str})


def dataclass_made(cls: type[T], fields: dict[str, Any]) -> T:
    """The instance ``cls``'s generated ``__init__`` makes of ``fields`` (every field, in
    field order), without its call of ``object.__setattr__`` per field (a frozen
    dataclass's): its ``__dict__`` is ``fields``. For a dataclass without slots, a
    ``__post_init__``, ``InitVar``s or fields left out of ``__init__``; the caller gives
    every field (tests hold each use equal to the constructor)."""
    made = _new(cls)
    _setattr(made, "__dict__", fields)
    return made
