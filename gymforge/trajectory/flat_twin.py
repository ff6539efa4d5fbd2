"""The twin of a flat record (scalars, literals and dicts of numbers only) in ``msgspec``:
the writer's validation of an episode record at two to three times the pydantic twin's speed.

:data:`FLAT` maps a record kind to a ``msgspec`` decoder of the same JSON text into the same
plain dict as ``twin.TWIN``, derived from the model's fields; it is narrower than the
models, never wider, and what it returns is checked by the writer as ``TWIN``'s answer is
(``episode_encoding._fast_checked``: equal to the record, and encoding back to the text
validated or else encoded again):

- every field is required (``seal`` excepted), as in ``twin``;
- ``msgspec`` decodes strictly: a JSON int, string or bool where the model would convert it
  (a float token count, ``"true"``, ``"1"``) is refused, and the writer then takes the
  model path; an int where a float is declared becomes that float, as pydantic makes it;
- unknown keys are dropped rather than refused: the dict returned then differs from the
  record, and the writer takes the model path, which refuses them;
- a string pattern is taken only from :data:`_PATTERNS`, written for Python's ``re`` with
  the meaning pydantic's (Rust) engine gives the model's: ``$`` there is the end of the
  text, where Python's ``$`` also matches before a final newline.

A model with anything else (a validator, a nested model, a union beyond ``X | None``, a
constraint not listed) has no flat twin: its records keep ``twin.TWIN``.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin

import annotated_types
import msgspec
from pydantic import BaseModel
from typing_extensions import TypedDict

from gymforge.trajectory.schema import EpisodeRecord
from gymforge.trajectory.twin import Unsupported

_PATTERNS = {r"^[0-9a-f]{64}$": r"^[0-9a-f]{64}\Z"}
"""The model patterns the flat twin knows, with their Python ``re`` spelling."""

_SCALARS = (int, float, str, bool)


def _constraint(meta: Any) -> msgspec.Meta:
    if type(meta) is annotated_types.Ge and type(meta.ge) is int:
        return msgspec.Meta(ge=meta.ge)
    pattern = getattr(meta, "pattern", None)
    general = type(meta).__name__ == "_PydanticGeneralMetadata"
    if general and vars(meta) == {"pattern": pattern} and pattern in _PATTERNS:
        return msgspec.Meta(pattern=_PATTERNS[pattern])
    raise Unsupported(f"constraint {meta!r}")


def _kind(annotation: Any) -> Any:
    """``annotation`` when flat (a scalar, a literal of strings, ``X | None``, a dict of
    strings to a scalar), else Unsupported."""
    if annotation in _SCALARS:
        return annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal and all(type(a) is str for a in args):
        return annotation
    if origin in (Union, types.UnionType) and len(args) == 2 and args[1] is type(None):
        return Union[_kind(args[0]), None]  # noqa: UP007
    if origin is dict and args[0] is str and args[1] in (int, float):
        return annotation
    raise Unsupported(f"type {annotation!r}")


def flat_decoder(model: type[BaseModel]) -> msgspec.json.Decoder[Any]:
    """The flat twin of ``model`` (module docstring); Unsupported when it has none."""
    decorators = model.__pydantic_decorators__
    kinds = (
        *("validators", "field_validators", "root_validators", "field_serializers"),
        *("model_serializers", "model_validators", "computed_fields"),
    )
    if any(getattr(decorators, k) for k in kinds) or model.__pydantic_post_init__ is not None:
        raise Unsupported(f"{model.__name__} has validators or serializers")
    if dict(model.model_config) != {"extra": "forbid"}:
        raise Unsupported(f"{model.__name__} has configuration {model.model_config}")
    fields: dict[str, Any] = {}
    for name, info in sorted(model.model_fields.items()):
        if info.alias or info.validation_alias or info.serialization_alias or info.exclude:
            raise Unsupported(f"{model.__name__}.{name} is aliased or excluded")
        kind = _kind(info.annotation)
        if info.metadata:  # on the value, not on its None (as pydantic applies them)
            metas = tuple(_constraint(m) for m in info.metadata)
            args = get_args(kind) if get_origin(kind) is Union else (kind,)
            kind = Union[(Annotated[(args[0], *metas)], *args[1:])]
        optional = name == "seal" and not info.is_required()
        fields[name] = NotRequired[kind] if optional else Required[kind]
    plain = TypedDict(f"{model.__name__}Flat", fields)  # type: ignore[misc]
    return msgspec.json.Decoder(plain)


def _build() -> dict[str, msgspec.json.Decoder[Any]]:
    try:
        return {"episode": flat_decoder(EpisodeRecord)}
    except Unsupported:
        return {}


FLAT: dict[str, msgspec.json.Decoder[Any]] = _build()
"""The flat twins by record kind (``record``): empty when the episode record is no longer
flat (tests/test_trajectory_flat_twin.py fails then, so it is kept up to date)."""
