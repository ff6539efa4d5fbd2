"""The writer's quick path: a record validated from its Python values, not from JSON text.

The writer's defining path (``gymforge.trajectory.io``) encodes each record as strict JSON,
validates that text against the schema, and encodes the validated record again for the line:
two JSON encodings per record. ``quick_line`` validates the record's values directly, in
pydantic's strict mode, which takes only what that path takes and makes the same values of
it: exact strings, ints, floats (an int for a float becomes that float, as the text path
makes it), bools, lists, dicts, and models given as dicts. What strict mode would take beyond
that, a model instance where the schema nests a model (the text path refuses it: it is not
JSON), is refused here by ``plain``. The writer falls back to the defining path for any
record this path does not take, and for any line it cannot encode (a value JSON cannot hold
under an untyped field) or that holds a lone surrogate (which the text path refuses), so
every error is the defining path's own and every line is the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from gymforge.trajectory.schema import LINE_ADAPTER, AnyLine, EpisodeRecord, StepRecord

SURROGATE = re.compile("[\ud800-\udfff]")

Check = Callable[[Any], bool]


def _fields_check(model: type[BaseModel]) -> Check:
    """True when no value of ``model``'s fields that nest a model is a model instance."""
    checks: list[tuple[str, Check]] = []
    for name, f in model.model_fields.items():
        found = _value_check(f.annotation)
        if found is not None:
            checks.append((name, found))

    def fields_plain(data: Any) -> bool:
        for name, value_check in checks:
            value = data.get(name)
            if value is not None and not value_check(value):
                return False
        return True

    return fields_plain


def _value_check(annotation: Any) -> Check | None:
    """A check of a value of ``annotation`` (None: it nests no model, nothing to check)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _value_check(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        inner = _fields_check(annotation)
        return lambda value: type(value) is dict and inner(value)
    if origin in (Union, UnionType):
        members = [_value_check(a) for a in args if a is not type(None)]
        found = [m for m in members if m is not None]
        if not found:
            return None
        return lambda value: not isinstance(value, BaseModel) and any(m(value) for m in found)
    if origin is list and args:
        item = _value_check(args[0])
        if item is None:
            return None
        return lambda value: type(value) is list and all(item(v) for v in value)
    if origin is dict and len(args) == 2:
        entry = _value_check(args[1])
        if entry is None:
            return None
        return lambda value: type(value) is dict and all(entry(v) for v in value.values())
    if origin is not None and any(_value_check(a) is not None for a in args):
        return lambda value: False  # a shape this check does not know: the text path
    return None


PLAIN: dict[type[BaseModel], Check] = {m: _fields_check(m) for m in (StepRecord, EpisodeRecord)}
"""Per line model: no model instance where the schema nests a model."""


def quick_line(marked: dict[str, Any]) -> AnyLine | None:
    """``marked`` (a step or episode record with its digest slot) validated from its
    values, or None when the defining path must judge it."""
    try:
        model = LINE_ADAPTER.validate_python(marked, strict=True)
    except ValidationError:
        return None
    plain = PLAIN.get(type(model))
    if plain is None or not plain(marked):
        return None
    return model
