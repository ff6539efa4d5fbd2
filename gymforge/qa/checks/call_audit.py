"""What ``error_paths`` asks of every tool call that returns an error.

- **No crash passes as handled.** An ``internal`` error (an unexpected exception inside the
  tool) for arguments that are valid against the tool's own JSON Schema is the tool's bug:
  the agent did nothing wrong and has nothing to fix.
- **Failed calls are atomic.** An error result must leave the state as it was, unless the
  tool declares that errors of that kind may have been applied (``Tool.error_effects``, such
  as ``world_write``'s timeout after the commit), and then the state must be exactly what the
  same call leaves when it succeeds (``effects.succeeded``, the counterfactual).

``edge_calls`` builds the schema-valid edge cases: every typed parameter of every tool, one
at a time, set to the empty string, a blank, a long string and odd unicode, to zero, minus
one and huge magnitudes, to every enum member, starting from a known-good call. A parameter's
types and members are read through unions, ``Optional``, ``$ref``s to nested models and enums
and ``const`` (``schema_types``); without an oracle call to start from, the neutral start
fills a nested model's required fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from gymforge.core.capabilities import ToolView
from gymforge.core.seeding import canonical_json
from gymforge.core.types import ToolCall
from gymforge.qa.checks.common import CheckFailed, first_difference, short
from gymforge.qa.checks.effects import Prefix, effect_view, succeeded
from gymforge.qa.checks.schema_types import admitted_types, named_values, resolve, subschemas

LONG = "z" * 5000
UNICODE = "Zo\u00eb \u6771\u4eac \U0001f680 e\u0301 \u202eabc"
EDGES: dict[str, tuple[Any, ...]] = {
    "string": ("", " ", LONG, UNICODE),
    "integer": (0, -1, -(2**31), 2**53),
    "number": (0.0, -1.0, -1e308, 1e308, 5e-324),
    "boolean": (True, False),
    "array": ([],),
    "object": ({},),
    "null": (None,),
}
NEUTRAL: dict[str, Any] = {
    "string": "x",
    "integer": 1,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "object": {},
}


def _check_schema(name: str, params: Mapping[str, Any]) -> None:
    """A tool schema the agent is shown must be usable: a valid JSON Schema whose every
    ``$ref`` points inside it. CheckFailed naming the tool otherwise."""
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as err:
        raise CheckFailed(
            f"tool {name}: its parameter schema is not valid JSON Schema: {err.message[:200]}"
        ) from None
    stack: list[Any] = [params]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and resolve(ref, params) is None:
                raise CheckFailed(
                    f"tool {name}: its parameter schema's $ref {ref!r} points nowhere in it; "
                    "a model cannot fill in a parameter whose schema it cannot read"
                )
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def edge_values(spec: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> list[Any]:
    """The members ``spec`` names and the edge values of every JSON type it admits (``$ref``
    resolved in ``root``, the tool's parameter schema); callers keep the schema-valid ones."""
    values = named_values(spec, root)
    for kind in admitted_types(spec, root):
        values += EDGES.get(kind, ())
    return values


def neutral_value(spec: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """A plain value ``spec`` likely accepts: the first member it names, else the neutral
    value of the first type it admits (an object with its required properties filled in)."""
    named = named_values(spec, root)
    if named:
        return named[0]
    kinds = admitted_types(spec, root)
    if kinds[:1] == ("object",) and depth < 8:
        for sub in subschemas(spec, root):
            if "properties" in sub or "required" in sub:
                props = sub.get("properties", {})
                return {
                    p: neutral_value(props.get(p), root, depth + 1) for p in sub.get("required", ())
                }
    return NEUTRAL.get(kinds[0]) if kinds else None


@dataclass
class CallAudit:
    """Validators of the tools' schemas and their declared side-effecting errors."""

    validators: dict[str, Draft202012Validator]
    effects: dict[str, frozenset[str]]
    params: dict[str, dict[str, Any]]
    """Each tool's parameter schema (the root its ``$ref``s resolve in)."""
    schemas: tuple[dict[str, Any], ...] = ()
    audited: int = 0
    declared_effects: int = 0
    verified_effects: int = 0

    @classmethod
    def of(cls, schemas: Iterable[Mapping[str, Any]], tools: Mapping[str, ToolView]) -> CallAudit:
        validators, params = {}, {}
        copied = tuple(dict(s) for s in schemas)
        for schema in copied:
            fn = schema["function"]
            _check_schema(fn["name"], fn["parameters"])
            validators[fn["name"]] = Draft202012Validator(fn["parameters"])
            params[fn["name"]] = dict(fn["parameters"])
        effects = {n: frozenset(t.error_effects) for n, t in tools.items()}
        return cls(validators, effects, params, copied)

    def schema_valid(self, name: str, arguments: Any) -> bool:
        validator = self.validators.get(name)
        return validator is not None and validator.is_valid(arguments)

    def check_crash(self, label: str, name: str, arguments: Any, result: Mapping[str, Any]) -> None:
        """Fail when a schema-valid call ended in an ``internal`` error."""
        error = result.get("error") or {}
        if error.get("kind") == "internal" and self.schema_valid(name, arguments):
            raise CheckFailed(
                f"{label}: tool {name} crashed on schema-valid arguments {short(arguments, 200)}"
                f" ({error.get('message', '')[:200]}): an internal error is the tool's bug, "
                "not a defined outcome; return a ToolError the agent can act on"
            )

    async def check_atomic(
        self,
        label: str,
        name: str,
        arguments: Any,
        result: Mapping[str, Any],
        before: Any,
        after: Any,
        prefix: Prefix | None,
    ) -> None:
        """Fail when an error result left the state changed, unless the tool declares that
        kind and the change is exactly the one the same call makes when it succeeds (the
        counterfactual replays ``prefix`` in a fresh instance, then the call with faults off;
        without a prefix a declared change is accepted unverified)."""
        self.audited += 1
        if result.get("ok", True):
            return
        found = first_difference(before, after)
        if found is None:
            return
        kind = (result.get("error") or {}).get("kind", "?")
        if kind not in self.effects.get(name, frozenset()):
            path, was, now = found
            raise CheckFailed(
                f"{label}: {name}{short(arguments, 200)} returned a {kind!r} error but left "
                f"the state changed: {path}: {short(was)} -> {short(now)}. A refused call must "
                f"change nothing, or the tool must declare error_effects=({kind!r},)"
            )
        self.declared_effects += 1
        if prefix is None:
            return
        call = ToolCall(name=name, arguments=dict(arguments))
        replayed, done = await succeeded(prefix, call)
        diverged = first_difference(before, replayed)
        if diverged is not None:
            path, was, now = diverged
            raise CheckFailed(
                f"{label}: replaying the episode before {name}{short(arguments, 200)} in a "
                f"fresh instance reached another state ({path}: {short(was)} vs "
                f"{short(now)}), so its declared {kind!r} side effect cannot be verified"
            )
        differs = first_difference(effect_view(done), effect_view(after))
        if differs is not None:
            path, ok_value, err_value = differs
            raise CheckFailed(
                f"{label}: {name}{short(arguments, 200)} returned a declared {kind!r} error "
                f"and left the state changed, but not as the same call succeeding would: "
                f"{path}: {short(ok_value)} had it succeeded, {short(err_value)} after the "
                "error. A side-effecting error must apply the whole call or nothing"
            )
        self.verified_effects += 1

    def edge_calls(self, name: str, base: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        """Schema-valid variants of ``base`` (or of neutral values), one parameter at a time."""
        root = self.params.get(name, {})
        start = dict(base) if base is not None else self._neutral(name)
        if start is None:
            return []
        out: list[dict[str, Any]] = []
        seen = {canonical_json(start)}  # by JSON text: 0, 0.0 and False are distinct edges
        for param, spec in root.get("properties", {}).items():
            for value in edge_values(spec, root):
                args = {**start, param: value}
                key = canonical_json(args)
                if key not in seen and self.schema_valid(name, args):
                    seen.add(key)
                    out.append(args)
        return out

    def _neutral(self, name: str) -> dict[str, Any] | None:
        root = self.params.get(name, {})
        args = {p: neutral_value(s, root) for p, s in root.get("properties", {}).items()}
        return args if self.schema_valid(name, args) else None
