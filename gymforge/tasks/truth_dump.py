"""Writing hidden truth as ``Task.truth``'s JSON dict: ``dump_truth`` and the per-model
layouts that let it copy plain fields as they are instead of going through pydantic.

``dump_truth`` leaves out fields that were never set (``exclude_unset``): a field with a
default that a family did not pass is absent from the dict, exactly as an optional key was
before truth was typed, and parsing the dict gives the same model back. That round trip is
what keeps task ids, fingerprints and recorded runs byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, PlainSerializer, RootModel, WrapSerializer
from pydantic.fields import FieldInfo

from gymforge.core.types import JSON


class Passthrough:
    """Field metadata (``Annotated[..., SkipValidation, PASSTHROUGH]``): the field is neither
    validated nor walked, for bulk plain data that something downstream checks anyway (a
    world task's seed rows, checked by its ``Schema``)."""


PASSTHROUGH = Passthrough()

_LAYOUTS: dict[type, _Layout | None] = {}


def dump_truth(truth: BaseModel) -> dict[str, JSON]:
    """``truth`` as the JSON dict ``Task.truth`` holds: fields never set are left out, fields
    with an alias are written under it. A field whose type holds no model is plain JSON
    already (validated when the model was built) and is handed on as it is; only fields
    holding models are dumped: models of exactly their declared class (in lists, dicts and
    optionals) here, anything else by pydantic. So the dict shares plain values with the model:
    truth is read-only, on both sides of the boundary. The result equals
    ``model_dump(by_alias=True, exclude_unset=True)``; a model that customises its
    serialisation is dumped by pydantic itself."""
    layout = _LAYOUTS.get(type(truth))  # only models (not root models) are ever keys
    if layout is not None and layout.flat:  # the shortcuts below, without the checks before
        set_fields = truth.__pydantic_fields_set__
        if len(set_fields) == layout.width:
            return dict(truth.__dict__)
        values = truth.__dict__  # some fields unset: the walk below, of plain fields only
        return {name: values[name] for name, _, _ in layout.fields if name in set_fields}
    if not isinstance(truth, BaseModel):
        raise TypeError(
            f"hidden truth must be a pydantic model, not {type(truth).__name__} "
            "(declare one: class MyTruth(BaseModel), TaskFamily[MyTruth])"
        )
    if isinstance(truth, RootModel):  # a union of models (CodeTruth): the chosen one
        inner = truth.root
        return dump_truth(inner) if isinstance(inner, BaseModel) else truth.model_dump()
    cls = type(truth)
    layout = _LAYOUTS[cls] if cls in _LAYOUTS else _layout(cls)
    if layout is None:  # serialisation only pydantic knows
        return truth.model_dump(by_alias=True, exclude_unset=True)
    values = truth.__dict__
    set_fields = truth.__pydantic_fields_set__
    if len(set_fields) == layout.width:
        if layout.flat:
            return dict(values)  # every field plain, set and under its own name, in field order
        if layout.renamed:  # every field plain and set, some under another name
            return {key: values[name] for name, key in layout.renamed}
    dumped: dict[str, Any] = {}
    for name, walk in layout.walkers:  # models of exactly the declared types: dumped here
        if name in set_fields:
            key = layout.keys[name]
            try:
                dumped[key] = walk(values[name])
            except _Unfit:  # anything else (a subclass, a tuple): by pydantic
                dumped[key] = truth.model_dump(by_alias=True, exclude_unset=True, include={name})[
                    key
                ]
    out: dict[str, JSON] = {}
    for name, key, plain in layout.fields:  # field order, as model_dump gives it
        if plain:
            if name in set_fields:
                out[key] = values[name]
        elif key in dumped:
            out[key] = dumped[key]
    if truth.__pydantic_extra__:  # UntypedTruth
        out.update(truth.__pydantic_extra__)
    return out


@dataclass(frozen=True)
class _Layout:
    """How ``dump_truth`` writes a model: ``(name, key, plain)`` per field (``plain`` when
    its value needs no dumping), and ``flat`` when every field is plain and written under
    its own name and the model allows no extras; ``width``: the number of fields;
    ``walkers``: how each field that holds models is dumped; ``keys``: each field's key in
    the dict; ``renamed``: ``(name, key)`` per field when every field is plain and the model
    allows no extras but some field is written under another name (an alias), else empty."""

    fields: tuple[tuple[str, str, bool], ...]
    flat: bool
    width: int  # the number of fields
    walkers: tuple[tuple[str, Callable[[Any], Any]], ...] = ()
    keys: dict[str, str] = field(default_factory=dict)
    renamed: tuple[tuple[str, str], ...] = ()


class _Unfit(Exception):
    """A value ``dump_truth`` leaves to pydantic (not exactly of its declared shape)."""


def _walker(annotation: Any) -> Callable[[Any], Any]:
    """How ``dump_truth`` dumps a value of ``annotation``: a model of exactly that class,
    a list or a dict of them, or an optional one (recursively); anything else raises
    ``_Unfit`` (pydantic dumps it: it serialises a subclass as the declared class, for one)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if issubclass(annotation, RootModel):
            return _unfit

        width = len(annotation.model_fields)

        def model(value: Any) -> Any:
            if type(value) is not annotation:
                raise _Unfit
            layout = _LAYOUTS.get(annotation)
            if layout is not None and layout.flat and len(value.__pydantic_fields_set__) == width:
                return dict(value.__dict__)  # dump_truth's own shortcut, without its checks
            return dump_truth(value)

        return model
    if origin is list and len(args) == 1:
        item = _walker(args[0])
        item_flat = _FlatWidth(args[0])

        def items(value: Any) -> Any:
            if type(value) is not list:
                raise _Unfit
            flat = item_flat()
            if flat is not None:  # many small models: the shortcut inline, each checked
                cls, width = flat
                return [
                    dict(v.__dict__)
                    if type(v) is cls and len(v.__pydantic_fields_set__) == width
                    else item(v)
                    for v in value
                ]
            return [item(v) for v in value]

        return items
    if origin is dict and len(args) == 2 and args[0] is str:
        entry = _walker(args[1])
        entry_flat = _FlatWidth(args[1])

        def entries(value: Any) -> Any:
            if type(value) is not dict:
                raise _Unfit
            flat = entry_flat()
            if flat is not None:
                cls, width = flat
                return {
                    k: dict(v.__dict__)
                    if type(v) is cls and len(v.__pydantic_fields_set__) == width
                    else entry(v)
                    for k, v in value.items()
                }
            return {k: entry(v) for k, v in value.items()}

        return entries
    if origin in (Union, UnionType) and len(args) == 2 and type(None) in args:
        inner = _walker(next(a for a in args if a is not type(None)))
        return lambda value: None if value is None else inner(value)
    return _unfit


def _unfit(value: Any) -> Any:
    raise _Unfit


class _FlatWidth:
    """``(annotation, its field count)`` when ``annotation`` is a model with a flat layout
    (``dump_truth`` copies an instance with every field set as its ``__dict__``), else None.
    Found when a walker first runs, not as it is built (a model may hold itself), and kept:
    a model's layout never changes once made."""

    __slots__ = ("annotation", "found")

    def __init__(self, annotation: Any) -> None:
        self.annotation = annotation
        self.found: tuple[tuple[type[BaseModel], int] | None] | None = None

    def __call__(self) -> tuple[type[BaseModel], int] | None:
        if self.found is None:
            self.found = (_flat_width(self.annotation),)
        return self.found[0]


def _flat_width(annotation: Any) -> tuple[type[BaseModel], int] | None:
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return None
    if issubclass(annotation, RootModel):
        return None
    layout = _LAYOUTS[annotation] if annotation in _LAYOUTS else _layout(annotation)
    if layout is None or not layout.flat:
        return None
    return annotation, layout.width


def _layout(model: type[BaseModel]) -> _Layout | None:
    """``model``'s layout; None for a model that customises its serialisation (serializers,
    computed or excluded fields), which pydantic must dump itself."""
    hooks = model.__pydantic_decorators__
    custom = (
        hooks.field_serializers
        or hooks.model_serializers
        or model.model_computed_fields
        or any(_serialises_itself(f) for f in model.model_fields.values())
    )
    fields = tuple(
        (
            name,
            f.serialization_alias or f.alias or name,
            PASSTHROUGH in f.metadata or not _holds_model(f.annotation),
        )
        for name, f in model.model_fields.items()
    )
    closed = model.model_config.get("extra") != "allow"
    flat = closed and all(plain and key == name for name, key, plain in fields)
    renamed = (
        tuple((name, key) for name, key, _ in fields)
        if closed and not flat and all(plain for _, _, plain in fields)
        else ()
    )
    walkers = tuple(
        (name, _walker(model.model_fields[name].annotation))
        for name, _, plain in fields
        if not plain
    )
    found = _LAYOUTS[model] = (
        None
        if custom
        else _Layout(fields, flat, len(fields), walkers, {n: key for n, key, _ in fields}, renamed)
    )
    return found


def _serialises_itself(f: FieldInfo) -> bool:
    """Whether pydantic writes the field otherwise than the value it holds: excluded (always
    or on a condition), or with a serialiser annotated on it or anywhere in its type (a
    passthrough field's own, ``SkipValidation``'s, writes the value as it is)."""
    if f.exclude or getattr(f, "exclude_if", None) is not None:
        return True
    if PASSTHROUGH in f.metadata:
        return False
    return any(isinstance(m, _SERIALISERS) for m in f.metadata) or _annotated_serialiser(
        f.annotation
    )


_SERIALISERS = (PlainSerializer, WrapSerializer)


def _annotated_serialiser(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated and any(
        isinstance(m, _SERIALISERS) for m in get_args(annotation)[1:]
    ):
        return True
    return any(_annotated_serialiser(arg) for arg in get_args(annotation))


def _holds_model(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_model(arg) for arg in get_args(annotation))
