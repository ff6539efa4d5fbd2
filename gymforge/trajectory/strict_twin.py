"""The trajectory schema's strict twin in ``msgspec``: the writer's validation of step and
episode records at two to three times the pydantic twin's speed.

:func:`strict_decoder` derives, from a record model's fields, a ``msgspec`` decoder of the
same JSON text into the same plain dict as ``twin.TWIN``; it is narrower than the models,
never wider, and what it returns is checked by the writer as ``TWIN``'s answer is
(``episode_encoding._fast_checked``: equal to the record, and encoding back to the text
validated or else encoded again):

- every field is required (``seal`` excepted), as in ``twin``;
- ``msgspec`` decodes strictly: a JSON int, string or bool where the model would convert it
  (a float token count, ``"true"``, ``"1"``) is refused, and the writer then takes the
  model path; an int where a float is declared becomes that float, as pydantic makes it;
- unknown keys are dropped rather than refused, at every level: the dict returned then
  differs from the record, and the writer takes the model path, which refuses them;
- a nested model is a nested ``TypedDict`` of the same rules; the validators the pydantic
  twin leaves out (``twin.check_known``: the text scrub and the plain-JSON check of tool-call
  arguments) are left out here on the same grounds (the text is orjson's; the writer checks
  the arguments' nesting with ``twin.shallow_action``);
- a discriminated union (``Action``) is not decoded as a union: one decoder per member is
  derived, the union replaced by that member (or, where the union is optional, by ``None``),
  and :func:`decoder_for` picks the one the record's own tag names. A record whose tag is
  not a string naming a member has no strict twin (the pydantic twin judges it). A
  member's own ``Literal`` tag field still checks the tag, so the decoder picked accepts
  only records the pydantic union routes to that member, and validates them as it does;
- a string pattern is taken only from :data:`_PATTERNS`, written for Python's ``re`` with
  the meaning pydantic's (Rust) engine gives the model's: ``$`` there is the end of the
  text, where Python's ``$`` also matches before a final newline.

A model with anything else (another validator, a union beyond ``X | None`` and one
discriminated union, a constraint not listed) has no strict twin: its records keep
``twin.TWIN``.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin

import annotated_types
import msgspec
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typing_extensions import TypedDict

from gymforge.trajectory.schema import EpisodeRecord, StepRecord
from gymforge.trajectory.twin import Unsupported, check_known

_PATTERNS = {
    r"^[0-9a-f]{64}$": r"^[0-9a-f]{64}\Z",
    r"^sha256:[0-9a-f]{64}$": r"^sha256:[0-9a-f]{64}\Z",
}
"""The model patterns the strict twin knows, with their Python ``re`` spelling."""

_SCALARS = (int, float, str, bool)
_NONE: Any = type(None)


def _constraint(meta: Any) -> msgspec.Meta:
    if type(meta) is annotated_types.Ge and type(meta.ge) is int:
        return msgspec.Meta(ge=meta.ge)
    pattern = getattr(meta, "pattern", None)
    general = type(meta).__name__ == "_PydanticGeneralMetadata"
    if general and vars(meta) == {"pattern": pattern} and pattern in _PATTERNS:
        return msgspec.Meta(pattern=_PATTERNS[pattern])
    raise Unsupported(f"constraint {meta!r}")


def _discriminated(kind: Any) -> tuple[str, tuple[type[BaseModel], ...]] | None:
    """``(discriminator, members)`` when ``kind`` is ``Annotated[A | B | ..., Field(
    discriminator=...)]`` over models, else None."""
    if get_origin(kind) is not Annotated:
        return None
    inner, *metadata = get_args(kind)
    if len(metadata) != 1 or type(metadata[0]) is not FieldInfo:
        return None
    discriminator = metadata[0].discriminator
    members = get_args(inner) if get_origin(inner) in (Union, types.UnionType) else ()
    if type(discriminator) is not str or not members:
        raise Unsupported(f"annotated type {kind!r}")
    if not all(isinstance(m, type) and issubclass(m, BaseModel) for m in members):
        raise Unsupported(f"union {inner!r}")
    return discriminator, members


class _Builder:
    """Twins of a record model with its one discriminated union (if any, a field of the
    record itself) pinned to ``tag``: the member whose ``Literal`` discriminator is ``tag``,
    or ``None`` for ``None``."""

    def __init__(self, tag: str | None) -> None:
        self.tag = tag
        self.union: tuple[str, str, tuple[str, ...], bool] | None = None
        """The union's field, discriminator, tags, and whether it is optional."""
        self.field = ""
        self.depth = 0

    def twin(self, model: type[BaseModel]) -> Any:
        check_known(model)
        self.depth += 1
        fields: dict[str, Any] = {}
        for name, info in sorted(model.model_fields.items()):
            if info.alias or info.validation_alias or info.serialization_alias or info.exclude:
                raise Unsupported(f"{model.__name__}.{name} is aliased or excluded")
            if info.discriminator is not None:
                raise Unsupported(f"{model.__name__}.{name} has a field discriminator")
            self.field = name
            kind = self.decoded(info.annotation, top=True)
            if info.metadata:  # on the value, not on its None (as pydantic applies them)
                metas = tuple(_constraint(m) for m in info.metadata)
                args = get_args(kind) if get_origin(kind) is Union else (kind,)
                kind = Union[(Annotated[(args[0], *metas)], *args[1:])]
            optional = name == "seal" and not info.is_required()
            fields[name] = NotRequired[kind] if optional else Required[kind]
        self.depth -= 1
        plain = TypedDict(f"{model.__name__}Strict", fields)  # type: ignore[misc]
        return plain

    def decoded(self, kind: Any, optional: bool = False, top: bool = False) -> Any:
        """``kind`` as ``msgspec`` is to decode it (module docstring), else Unsupported;
        ``top``: ``kind`` is a field's own type (``optional``: within ``X | None``)."""
        if kind in _SCALARS or kind is Any:
            return kind
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return self.twin(kind)
        origin, args = get_origin(kind), get_args(kind)
        if origin is Literal and all(type(a) is str for a in args):
            return kind
        if origin in (Union, types.UnionType) and len(args) == 2 and args[1] is _NONE:
            inner = self.decoded(args[0], optional=True, top=top)
            return _NONE if inner is _NONE else Union[inner, None]  # noqa: UP007
        if origin is list:
            return list[self.decoded(args[0])]  # type: ignore[misc]
        if origin is dict and args[0] is str:
            return dict[str, self.decoded(args[1])]  # type: ignore[misc]
        union = _discriminated(kind) if top else None
        if union is None:
            raise Unsupported(f"type {kind!r}")
        return self._pinned(*union, optional)

    def _pinned(
        self, discriminator: str, members: tuple[type[BaseModel], ...], optional: bool
    ) -> Any:
        tags: dict[str, type[BaseModel]] = {}
        for member in members:
            info = member.model_fields.get(discriminator)
            values = get_args(info.annotation) if info is not None else ()
            if info is None or get_origin(info.annotation) is not Literal or len(values) != 1:
                raise Unsupported(f"{member.__name__}.{discriminator} is not one literal")
            tags[values[0]] = member
        if self.union is not None or self.depth != 1 or len(tags) != len(members):
            raise Unsupported("a union nested, a second union, or a tag shared")
        self.union = (self.field, discriminator, tuple(sorted(tags)), optional)
        if self.tag is None:
            return _NONE  # a union that is not optional has no decoder for None
        if self.tag not in tags:
            raise Unsupported(f"no member tagged {self.tag!r}")
        return self.twin(tags[self.tag])


def strict_decoder(model: type[BaseModel], tag: str | None = None) -> msgspec.json.Decoder[Any]:
    """The strict twin of ``model`` with its discriminated union (if any) pinned to the
    member tagged ``tag`` (``None``: the union's ``None``); Unsupported when it has none."""
    builder = _Builder(tag)
    plain = builder.twin(model)
    if tag is None and builder.union is not None and not builder.union[3]:
        raise Unsupported(f"{model.__name__}.{builder.union[0]} is never None")
    return msgspec.json.Decoder(plain)


@dataclass(frozen=True)
class StrictTwin:
    """A record kind's strict twins: by the tag of the union in ``field`` (``None`` for a
    ``None`` there), or the one in ``decoders[None]`` when the model has no union."""

    decoders: dict[str | None, msgspec.json.Decoder[Any]]
    field: str | None = None
    discriminator: str = ""


def strict_twin(model: type[BaseModel]) -> StrictTwin:
    """Every strict twin of ``model``; Unsupported when it has none."""
    probe = _Builder(None)
    plain = probe.twin(model)
    if probe.union is None:
        return StrictTwin({None: msgspec.json.Decoder(plain)})
    field, discriminator, tags, optional = probe.union
    decoders: dict[str | None, msgspec.json.Decoder[Any]] = {
        tag: strict_decoder(model, tag) for tag in tags
    }
    if optional:
        decoders[None] = msgspec.json.Decoder(plain)
    return StrictTwin(decoders, field, discriminator)


def decoder_for(record: dict[str, Any]) -> msgspec.json.Decoder[Any] | None:
    """The strict twin for ``record`` (a plain dict), or None when it has none: an unknown
    kind, or a union value that is neither ``None`` nor an object tagged with a string."""
    kind = record.get("record")
    twin = STRICT.get(kind) if type(kind) is str else None
    if twin is None:
        return None
    if twin.field is None:
        return twin.decoders[None]
    value = record.get(twin.field)
    if value is None:
        return twin.decoders.get(None)
    tag = value.get(twin.discriminator) if type(value) is dict else None
    return twin.decoders.get(tag) if type(tag) is str else None


def _build() -> dict[str, StrictTwin]:
    out: dict[str, StrictTwin] = {}
    for kind, model in (("step", StepRecord), ("episode", EpisodeRecord)):
        try:
            out[kind] = strict_twin(model)
        except Unsupported:
            continue
    return out


STRICT: dict[str, StrictTwin] = _build()
"""The strict twins by record kind (``record``): a kind is missing when its model holds
something the twin cannot mirror (tests/test_trajectory_strict_twin.py fails then, so it is
kept up to date)."""
