"""Which JSON types a parameter's JSON Schema admits, for schemas without a plain ``type``.

Tool parameters built from Python types often carry no ``type`` key of their own: a union
(``int | str``) is an ``anyOf``, ``Optional[X]`` an ``anyOf`` with ``null``, a nested pydantic
model or an ``Enum`` a ``$ref`` into the tool schema's ``$defs``, a mixed ``Literal`` a bare
``enum``, and ``Any`` no constraint at all. ``admitted_types`` reads all of these (``$ref``
resolved against the tool's whole parameter schema, its ``root``) so that ``error_paths`` can
pick a value of a type no branch admits and ``call_audit`` can build schema-valid edge cases.

The answer over-approximates, never under: keywords it does not read (``not``, ``if``,
``pattern``...) only ever make a schema stricter, so a type left out of the answer is one the
schema really rejects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
"""Every JSON Schema type, in the order an unconstrained schema (``Any``) lists them."""

_MAX_DEPTH = 32
"""How many ``$ref``/``anyOf`` levels are followed (a cyclic ``$ref`` stops here)."""


def json_type(value: Any) -> str:
    """The JSON Schema type of a plain JSON ``value`` (an integral float is an integer)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


def admits(types: tuple[str, ...], value: Any) -> bool:
    """Whether a schema admitting ``types`` may accept ``value`` by its type."""
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def admitted_types(spec: Any, root: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The JSON types ``spec`` admits, in the schema's own order; all of ``JSON_TYPES`` when
    it constrains none (``Any``). ``$ref`` is resolved inside ``root``."""
    found = _admitted(spec, root or {}, 0)
    return JSON_TYPES if found is None else found


def subschemas(spec: Any, root: Mapping[str, Any] | None = None) -> Iterator[Mapping[str, Any]]:
    """``spec`` and every schema it is made of at the same level: its ``$ref`` resolved and
    its ``anyOf``/``oneOf``/``allOf`` members, depth first (not properties or items)."""
    yield from _walk(spec, root or {}, 0)


def named_values(spec: Any, root: Mapping[str, Any] | None = None) -> list[Any]:
    """The ``enum`` members and ``const`` values that ``spec`` or its subschemas name."""
    out: list[Any] = []
    for sub in subschemas(spec, root):
        out += list(sub.get("enum", ()))
        if "const" in sub:
            out.append(sub["const"])
    return out


def resolve(ref: str, root: Mapping[str, Any]) -> Any:
    """The schema a local ``$ref`` (``#/$defs/Name``) points to in ``root``; None when it is
    not local or points nowhere."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    path = ref[1:].lstrip("/")
    for part in path.split("/") if path else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _walk(spec: Any, root: Mapping[str, Any], depth: int) -> Iterator[Mapping[str, Any]]:
    if not isinstance(spec, Mapping) or depth > _MAX_DEPTH:
        return
    yield spec
    ref = spec.get("$ref")
    if isinstance(ref, str):
        yield from _walk(resolve(ref, root), root, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        for member in spec.get(key, ()):
            yield from _walk(member, root, depth + 1)


def _admitted(spec: Any, root: Mapping[str, Any], depth: int) -> tuple[str, ...] | None:
    """``admitted_types``, with None for "unconstrained"."""
    if spec is False:
        return ()
    if not isinstance(spec, Mapping) or depth > _MAX_DEPTH:
        return None
    out: tuple[str, ...] | None = None
    kinds = spec.get("type")
    if kinds is not None:
        out = _meet(out, (kinds,) if isinstance(kinds, str) else tuple(kinds))
    if "enum" in spec:
        out = _meet(out, tuple(json_type(v) for v in spec["enum"]))
    if "const" in spec:
        out = _meet(out, (json_type(spec["const"]),))
    ref = spec.get("$ref")
    if isinstance(ref, str):
        out = _meet(out, _admitted(resolve(ref, root), root, depth + 1))
    for key in ("anyOf", "oneOf"):
        if key in spec:
            members = [_admitted(m, root, depth + 1) for m in spec[key]]
            union = None if None in members else tuple(t for m in members for t in m or ())
            out = _meet(out, union)
    for member in spec.get("allOf", ()):
        out = _meet(out, _admitted(member, root, depth + 1))
    return out


def _meet(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The types both admit (None is "any"), in ``b``'s order; an integer is a number."""
    if a is None or b is None:
        found = a if b is None else b
        return None if found is None else tuple(dict.fromkeys(found))
    out: list[str] = []
    for kind in b:
        if kind in a or (kind == "integer" and "number" in a):
            out.append(kind)
        elif kind == "number" and "integer" in a:
            out.append("integer")
    return tuple(dict.fromkeys(out))
