"""The trajectory schema as plain dicts: the writer's validation without building models.

The writer checks every record against the schema models (``schema.LINE_ADAPTER``) and
writes the validated dump. Building the models and dumping them again is half of that
work. :data:`TWIN` validates the same JSON text against the same fields, derived here from
the models themselves (every field's type and constraints, ``extra="forbid"``, the same
discriminated unions), into ``TypedDict`` s: pydantic returns the dump directly.

The twin is narrower than the models, never wider, so a record it accepts is one the models
accept, and what it returns is their dump:

- every field is required: a default never applies, so the dump cannot hold a value the
  record lacks (a record leaving a defaulted field out takes the model path). The one
  exception is ``seal``, which the writer drops from an unsealed line's dump anyway;
- the models' own validators are not copied, which is exact only for the validators
  :func:`check_known` lists, on the input the writer gives (JSON text that orjson wrote, so
  valid UTF-8 without lone surrogates, NaN or infinities): ``core.types``'s text scrub
  (which replaces lone surrogates, of which there are none, and refuses containers nested
  deeper than ``MAX_NESTING``: :func:`shallow_action` checks that instead) and the check
  that tool-call arguments are plain JSON (JSON text parses to nothing else);
- a model with any other validator, serializer, alias or configuration makes :data:`TWIN`
  None, and the writer takes the model path for every record (tests/test_trajectory_twin.py
  fails then, so the twin is kept up to date rather than quietly turned off).

Its fields are declared in sorted order, so the dump it returns for JSON text with sorted
keys has its keys sorted at every level (a free-form dict keeps the text's order), and
encoding it again needs no sort: the writer then checks that encoding against the text it
validated, which also tells it that validation converted nothing (``1`` to ``1.0``).
"""

from __future__ import annotations

import math
import types
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin

import msgspec
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

from gymforge.core.types import MAX_NESTING
from gymforge.trajectory.schema import EpisodeRecord, PolicyRecord, RunSealRecord, StepRecord

_KNOWN = frozenset({"_Text._scrub", "ToolCall._plain_json"})
"""The validators the twin leaves out (module docstring), by qualified name."""

_ARGUMENTS_DEPTH = MAX_NESTING // 2
"""Tool-call arguments nested deeper than this take the model path, which refuses them past
``MAX_NESTING`` (the twin does not check nesting)."""


class Unsupported(Exception):
    """A model the twin cannot mirror exactly."""


def check_known(model: type[BaseModel]) -> None:
    """Unsupported unless ``model``'s validators are only those the twins may leave out
    (:data:`_KNOWN`) and its configuration is ``extra="forbid"`` (and ``frozen``)."""
    decorators = model.__pydantic_decorators__
    for kind in (
        decorators.validators,
        decorators.field_validators,
        decorators.root_validators,
        decorators.field_serializers,
        decorators.model_serializers,
        decorators.model_validators,
        decorators.computed_fields,
    ):
        for decorator in kind.values():
            func = getattr(decorator.func, "__func__", decorator.func)
            name = getattr(func, "__qualname__", "")
            if func.__module__ != "gymforge.core.types" or name not in _KNOWN:
                raise Unsupported(f"{model.__name__} has {name or decorator!r}")
    if model.__pydantic_post_init__ is not None:
        raise Unsupported(f"{model.__name__} has model_post_init")
    config = dict(model.model_config)
    config.pop("frozen", None)
    if config != {"extra": "forbid"}:
        raise Unsupported(f"{model.__name__} has configuration {config}")


class _Builder:
    def __init__(self) -> None:
        self.twins: dict[type[BaseModel], Any] = {}

    def twin(self, model: type[BaseModel]) -> Any:
        if model in self.twins:
            return self.twins[model]
        check_known(model)
        fields: dict[str, Any] = {}
        for name, info in sorted(model.model_fields.items()):  # the dump's keys sorted
            if info.alias or info.validation_alias or info.serialization_alias or info.exclude:
                raise Unsupported(f"{model.__name__}.{name} is aliased or excluded")
            if info.discriminator is not None:
                raise Unsupported(f"{model.__name__}.{name} has a field discriminator")
            kind = self.type(info.annotation)
            if info.metadata:
                kind = Annotated[(kind, *info.metadata)]
            optional = name == "seal" and not info.is_required()
            fields[name] = NotRequired[kind] if optional else Required[kind]
        plain = TypedDict(f"{model.__name__}Twin", fields)  # type: ignore[misc]
        made: Any = with_config(ConfigDict(extra="forbid"))(plain)
        self.twins[model] = made
        return made

    def type(self, kind: Any) -> Any:
        """``kind`` with every model in it replaced by its twin."""
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return self.twin(kind)
        origin = get_origin(kind)
        if origin is None or origin is Literal:
            return kind
        args = get_args(kind)
        if origin is Annotated:
            return Annotated[(self.type(args[0]), *kind.__metadata__)]
        if origin in (Union, types.UnionType):
            return Union[tuple(self.type(a) for a in args)]  # noqa: UP007
        if origin in (list, dict):
            parts = tuple(self.type(a) for a in args)
            return origin[parts] if len(parts) > 1 else origin[parts[0]]
        raise Unsupported(f"type {kind!r}")


def _build() -> TypeAdapter[Any] | None:
    builder = _Builder()
    try:
        lines = tuple(builder.twin(m) for m in (StepRecord, EpisodeRecord, RunSealRecord))
    except Unsupported:
        return None
    line: Any = Annotated[Union[lines], Field(discriminator="record")]  # noqa: UP007
    return TypeAdapter(line)


TWIN: TypeAdapter[Any] | None = _build()
"""Validates a trajectory line's JSON text into the models' dump (a plain dict); None when
the models hold something the twin cannot mirror (module docstring)."""


def shallow_action(body: dict[str, Any]) -> bool:
    """Whether the tool-call arguments of step record ``body`` (if any) are nested no
    deeper than the twin may vouch for (``_ARGUMENTS_DEPTH``)."""
    action = body.get("action")
    if type(action) is not dict or action.get("kind") != "tool_call":
        return True
    arguments = action.get("arguments")
    return nested_within([arguments] if type(arguments) in (dict, list) else [], _ARGUMENTS_DEPTH)


def nested_within(level: list[Any], depth: int) -> bool:
    """Whether the plain dicts and lists of ``level`` hold dicts and lists no more than
    ``depth`` levels below them, walked level by level (no recursion)."""
    for _ in range(depth):
        level = [
            child
            for value in level
            for child in (value.values() if type(value) is dict else value)
            if type(child) is dict or type(child) is list
        ]
        if not level:
            return True
    return False


def _liftable(model: type[BaseModel], wanted: dict[str, type]) -> dict[str, type]:
    """The fields of ``wanted`` that ``model`` declares exactly ``list[T] | None`` with no
    constraint: a list of exactly ``T`` is all the twin checks of them (else they stay with
    the twin, and tests/test_trajectory_twin.py fails, so the lift is kept up to date)."""
    out: dict[str, type] = {}
    for name, kind in wanted.items():
        info = model.model_fields.get(name)
        if info is None or info.metadata or get_origin(info.annotation) is not types.UnionType:
            continue
        args = get_args(info.annotation)
        exact = len(args) == 2 and args[1] is type(None) and get_origin(args[0]) is list
        if exact and get_args(args[0]) == (kind,):
            out[name] = kind
    return out


LIFTABLE = _liftable(
    PolicyRecord, {"prompt_token_ids": int, "completion_token_ids": int, "logprobs": float}
)
"""The policy record's number lists (hundreds to thousands of values a step) that
:func:`lift_numbers` may take out of the text the twin validates."""


def lift_numbers(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]]] | None:
    """``record`` with each of its policy record's :data:`LIFTABLE` lists that holds only
    numbers of its element type set to an empty list, and those lists taken out as copies
    of exact builtins (copied, then checked and converted in one pass in C: the record's own
    lists may be a policy's, which it may change while the writer runs); None when none is.

    The copy is ``msgspec``'s strict conversion (:data:`_EXACT`): for token ids an ``int``
    or an int subclass (an ``IntEnum``), copied as the ``int`` it is; for logprobs a
    ``float`` or an int, copied as a ``float``, every one finite; never a ``bool``, a float
    subclass, a plain enum or any other type (however its metaclass answers ``==``). Those
    values are what the model path writes: ``json`` writes an int subclass as ``int``
    writes it, and the models validate an int in a float list into that ``float``. Such a
    list, written by orjson (decimal ints, shortest round-trip floats), is validated by the
    twin into the same values, converting none: the twin's answer for the record is its
    answer for the rest with the same lists put back, so the writer validates the rest only.
    Any other list (a bool, NaN, a subclass of float) stays in the record for the twin to
    judge.

    A copy is made by ``list(value)``, whose one allocation that can start a collection
    (the new list object) comes before it reads ``value``: it then reads the size and the
    items with nothing in between that runs code. ``value.copy()`` (``list_slice``) reads
    the size, allocates the new list (a collection there can run a finalizer that clears
    ``value``) and then reads the items through the old size: a crash unless that
    allocation is served from the interpreter's free list of lists
    (tests/test_trajectory_lift.py; tests/redteam/test_fast_paths_red10.py crashed so when
    a version of the lift kept its copies alive together)."""
    policy = record.get("policy")
    if type(policy) is not dict:
        return None
    lifted: dict[str, list[Any]] = {}
    for name, exact in _EXACT.items():
        value = policy.get(name)
        if type(value) is not list or not value:
            continue
        try:  # of a copy (docstring): the conversion reads the list's item array, taken
            value = exact(list(value))  # before it allocates (a collection may run finalizers)
        except msgspec.ValidationError:
            continue
        if name in _FLOATS and not math.isfinite(sum(value)):  # finite iff every one is
            continue
        lifted[name] = value
    if not lifted:
        return None
    return {**record, "policy": {**policy, **{name: [] for name in lifted}}}, lifted


def _converter(kind: type) -> Any:
    target = list[kind]  # type: ignore[valid-type]

    def exact(value: list[Any]) -> list[Any]:
        return msgspec.convert(value, target, strict=True)

    return exact


_EXACT = {name: _converter(kind) for name, kind in LIFTABLE.items()}
"""Each liftable list's checked copy (:func:`lift_numbers`)."""
_FLOATS = frozenset(name for name, kind in LIFTABLE.items() if kind is float)
