"""Trusted truth models: a model built from values a family's own code made, without
validating them again (``trusted``), for the families whose generation is dominated by
building their truth; ``CHECK_TRUSTED`` (on in ``tests/tasks/test_trusted_truth.py``, over
every built-in family) validates each one as well and refuses a difference, which is what
proves a family's use of it."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError

from gymforge.core.built import built
from gymforge.settings import check_trusted_truth
from gymforge.tasks.truth_dump import dump_truth

_M = TypeVar("_M", bound=BaseModel)

CHECK_TRUSTED = check_trusted_truth()
"""When set (``GYMFORGE_CHECK_TRUSTED=1``, or patched on by the test of every built-in
family), ``trusted`` validates what it builds as well and refuses any difference: the proof
that a family's trusted values are exactly what validation gives."""

_REQUIRED: Any = object()  # a field without a default
_ASK: Any = object()  # a default to ask the field for each time (a factory, a mutable value)
_ATOMS = (type(None), bool, int, float, str, bytes)  # defaults the field hands out as they are

_Spec = tuple[tuple[str, ...], tuple[tuple[str, Any], ...], bool, set[str]]
"""A model's field names in field order, ``(name, default)`` per field, whether it is a
root model, and the fields set that every build given all its fields shares
(``_trusted_spec``)."""

_TRUSTED: dict[type, _Spec | None] = {}

_VALIDATING: ContextVar[bool] = ContextVar("validating_trusted", default=False)


@contextmanager
def validating() -> Iterator[None]:
    """Within it, ``trusted`` validates what it is given, as the model's constructor does: for
    a build given values its family did not draw (explicit params from a task id, such as
    ``page_size=10.0``, which a ``ChoiceKnob`` of ``10`` contains), so that the truth is the
    validated one (``10``) and not the value as given (``TaskFamily.generate``)."""
    token = _VALIDATING.set(True)
    try:
        yield
    finally:
        _VALIDATING.reset(token)


def trusted(model: type[_M], /, **values: Any) -> _M:
    """A ``model`` of ``values`` (by field name) built without validating them: what
    ``model(**values)`` gives when they are valid, the same fields in the same order, the
    same fields set, at a fraction of its cost. Only for values a family's own code made,
    of exactly the declared types (a ``str`` it formatted, a list it built, models and
    ``TypedDict`` rows it built as such), never for data read from outside; and only in a
    family whose tests build its tasks with ``CHECK_TRUSTED`` on, which validates each
    trusted model as well and refuses a difference. A model whose validation transforms or
    adds to its values (validators, its own ``__init__``, ``model_post_init``, private
    attributes, extras), or that takes a field by its alias only, is validated as ever.

    Builds given every field share one fields set (of every field name), where validation
    makes one per model: a kept task holds one per model in its truth, and freeing them
    was a good part of evicting it. Pydantic only ever adds a field's name to a live
    model's fields set (assignment, ``validate_assignment``), which that set holds
    already; a copy (``model_copy``, ``copy``, ``deepcopy``, pickling) has a set of its
    own. So the set is never changed, unless code changes ``model_fields_set`` itself, which
    nothing may do to a trusted model (tests/tasks/test_trusted_truth.py)."""
    spec = _TRUSTED.get(model, _ASK)
    if spec is _ASK:
        spec = _trusted_spec(model)
    if spec is None or _VALIDATING.get():
        return model.model_validate(values, by_alias=False, by_name=True)
    names, defaults, root, every = spec
    given = every
    try:
        if tuple(values) == names:  # every field given, in field order: ``values`` as it is
            fields = values
        elif len(values) == len(names):  # every field given: in field order
            fields = {name: values[name] for name in names}
        else:
            given = set(values)
            fields = {
                name: values[name] if name in values else _default(model, name, default)
                for name, default in defaults
            }
            if not values.keys() <= fields.keys():
                raise KeyError(sorted(set(values) - set(fields)))
    except KeyError as err:
        raise TypeError(f"{model.__name__} has no field {err}") from None
    made = built(model, fields, given, root)
    if CHECK_TRUSTED:
        check_trusted(made)
    return made


_SLOTS = ("__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


def check_trusted(built: BaseModel) -> None:
    """Raise ``AssertionError`` unless validating ``built``'s fields gives ``built`` back:
    equal, the same fields set, and the same JSON (which tells ``1`` from ``1.0`` and
    ``True``, and keeps key order). Validating its dump, as parsing ``Task.truth`` does."""
    model = type(built)
    try:  # a value not of its declared type is refused, not warned about
        dumped = built.model_dump(by_alias=True, exclude_unset=True, warnings="error")
    except PydanticSerializationError as err:
        raise AssertionError(f"{model.__name__}: trusted values are not of their types") from err
    again = model.model_validate(dumped)
    assert again == built, f"{model.__name__}: trusted values validate to another model"
    assert again.model_fields_set == built.model_fields_set, model.__name__
    assert list(again.__dict__) == list(built.__dict__), model.__name__
    assert again.model_dump_json() == built.model_dump_json(), model.__name__
    assert json.dumps(dump_truth(again)) == json.dumps(dump_truth(built)), model.__name__


def _default(model: type[BaseModel], name: str, default: Any) -> Any:
    """The value of field ``name`` left out of a trusted build: ``default`` itself when it
    is an atom the spec kept, else the field's own (a fresh collection, a factory's)."""
    if default is _REQUIRED:
        raise TypeError(f"{model.__name__}: trusted without its field {name!r}")
    if default is not _ASK:
        return default
    return model.model_fields[name].get_default(call_default_factory=True)


def _trusted_spec(model: type[BaseModel]) -> _Spec | None:
    """The names of ``model``'s fields and ``(name, default)`` per field, in field order;
    None when validation does more than check its values (see ``trusted``). ``default`` is
    ``_REQUIRED``, ``_ASK`` or the default itself when it is an atom (``None``, a number, a
    string), which the field's ``get_default`` hands out as it is (it copies only
    collections)."""
    hooks = model.__pydantic_decorators__
    config = model.model_config
    by_name = config.get("validate_by_name") or config.get("populate_by_name")
    plain = not (
        hooks.validators
        or hooks.field_validators
        or hooks.root_validators
        or hooks.model_validators
        or model.__pydantic_post_init__
        or model.__private_attributes__
        or model.model_config.get("extra") == "allow"
        or model.__new__ is not object.__new__
        or model.__pydantic_custom_init__  # validation runs a model's own ``__init__``
        or any(  # a root model keeps no extras or private values: its class says None
            inspect.getattr_static(model, slot) is not BaseModel.__dict__[slot]
            for slot in _SLOTS[: 1 if model.__pydantic_root_model__ else 3]
        )
        or any(  # an alias is only another name to give a field by, if a name will do
            f.validate_default or ((f.alias or f.validation_alias) and not by_name)
            for f in model.model_fields.values()
        )
    )
    fields = model.model_fields
    spec = (
        (
            tuple(fields),
            tuple((name, _default_of(f)) for name, f in fields.items()),
            bool(model.__pydantic_root_model__),
            set(fields),
        )
        if plain
        else None
    )
    _TRUSTED[model] = spec
    return spec


def _default_of(f: FieldInfo) -> Any:
    if f.is_required():
        return _REQUIRED
    if f.default_factory is None and type(f.default) in _ATOMS:
        return f.default
    return _ASK
