"""``built``: a pydantic model instance made of field values already known to be valid, as
validation makes it, without validating them again. For the hot constructors that check
their values first: ``Verdict``'s, ``Task``'s and ``MathTruth``'s (each held equal to
validation by a test), a family's ``trusted`` truth (``gymforge.tasks.trusted``), and
``Message``'s ``__init__`` (``exact_init``)."""

from __future__ import annotations

from collections.abc import Callable
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


def exact_init(
    fields_of: Callable[[dict[str, Any]], dict[str, Any] | None],
) -> Callable[[type[M]], type[M]]:
    """A class decorator giving a pydantic ``model`` (without extras, private attributes or
    an ``__init__`` of its own) an ``__init__`` that builds the instance as ``built``
    does, its fields set being the keywords given, when ``fields_of(keywords)`` gives
    every field's value as validation would make it (field order), and otherwise
    validates as ``BaseModel.__init__`` does (a subclass of ``model`` always validates).
    pydantic is told the ``__init__`` is its own, so ``model_validate`` and a model
    holding ``model`` never call it: validation is unchanged."""

    def decorate(model: type[M]) -> type[M]:
        validate = model.__init__

        def __init__(self: M, /, **data: Any) -> None:
            fields = fields_of(data) if type(self) is model else None
            if fields is None:
                validate(self, **data)
                return
            _setattr(self, "__dict__", fields)
            _set_fields_set(self, set(data))
            _set_extra(self, None)
            _set_private(self, None)

        __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]  # pydantic's flag
        __init__.__doc__ = validate.__doc__
        model.__init__ = __init__  # type: ignore[method-assign,assignment]
        return model

    return decorate


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
