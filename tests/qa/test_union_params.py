"""``error_paths`` on tools whose parameters have no plain ``type`` in their JSON Schema:
unions (``anyOf``), ``Optional``, mixed ``Literal``s (a bare ``enum``), nested pydantic models
and enums (``$ref`` into ``$defs``) and ``Any``. Every generated bad value must be plain JSON
of a type the schema rejects, and the schema-valid edge cases must reach inside those schemas."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from gymforge.core.types import ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa.checks.call_audit import CallAudit
from gymforge.qa.checks.error_paths import cases
from gymforge.qa.checks.schema_types import JSON_TYPES, admitted_types
from gymforge.tools import tool

OPTS = QAOptions(episodes=12, fuzz_examples=20)


class Note(BaseModel):
    text: str
    pinned: bool = False


class UnionParamsEnv(LedgerEnv):
    """``LedgerEnv`` with one read-only tool whose parameters need every kind of schema."""

    @tool
    def annotate(
        self,
        ref: int | str,
        due: float | None,
        mode: Literal["x", 1],
        note: Note,
        extra: Any = None,
    ) -> str:
        """Attach a note to a reference (changes nothing).

        Args:
            ref: A transfer number or an account id.
            due: Days until it is due, if any.
            mode: How to file it.
            note: The note itself.
            extra: Anything else.
        """
        return self.describe(ref, due, mode, note)

    def describe(self, ref: int | str, due: float | None, mode: Any, note: Note) -> str:
        return f"noted {ref}: {note.text} ({mode}, {due})"


class EmptyRefCrashEnv(UnionParamsEnv):
    """Defect: ``annotate`` reads the first character of a string ``ref``, so the schema-valid
    empty string crashes it. Only a call with a valid nested ``note`` reaches that line."""

    def describe(self, ref: int | str, due: float | None, mode: Any, note: Note) -> str:
        return f"noted {ref[0] if isinstance(ref, str) else ref}: {note.text}"


RANK = {  # a schema as an MCP server may send it: enums and consts behind $ref, oneOf, allOf
    "type": "function",
    "function": {
        "name": "rank",
        "description": "Rank an item.",
        "parameters": {
            "type": "object",
            "$defs": {
                "Level": {"enum": ["low", "high"]},
                "Id": {"$ref": "#/$defs/Level"},
                "Anything": {"description": "any JSON value"},
            },
            "properties": {
                "level": {"$ref": "#/$defs/Level"},
                "via": {"$ref": "#/$defs/Id"},
                "score": {"oneOf": [{"type": "integer"}, {"const": "max"}]},
                "weight": {"allOf": [{"type": ["number", "string"]}, {"type": "number"}]},
                "free": {"$ref": "#/$defs/Anything"},
            },
            "required": ["level", "via", "score", "weight"],
            "additionalProperties": False,
        },
    },
}


def _schemas() -> tuple[dict[str, Any], ...]:
    return (*UnionParamsEnv().toolset.schemas, RANK)


def test_error_paths_passes_on_union_optional_literal_and_model_parameters() -> None:
    result = run_check("error_paths", QATarget.from_factory(UnionParamsEnv), OPTS)
    assert result.passed, result.details


def test_a_crash_behind_a_nested_model_parameter_is_flagged() -> None:
    result = run_check("error_paths", QATarget.from_factory(EmptyRefCrashEnv), OPTS)
    assert not result.passed
    assert "crashed on schema-valid arguments" in result.details, result.details
    assert "'ref': ''" in result.details, result.details


@pytest.mark.parametrize("tool_name", ["annotate", "rank"])
def test_wrong_types_are_plain_json_the_schema_rejects(tool_name: str) -> None:
    schema = next(s for s in _schemas() if s["function"]["name"] == tool_name)
    params = schema["function"]["parameters"]
    action = dict(cases(_schemas()))[f"{tool_name}.wrong_types"]
    assert isinstance(action, ToolCall)
    args = action.arguments
    assert json.loads(json.dumps(args)) == args
    # every parameter but those that admit any value (``Any``, a ``$ref`` to no constraint)
    assert set(args) == set(params["properties"]) - {"extra", "free"}
    for name, value in args.items():
        spec = {**params["properties"][name], "$defs": params["$defs"]}
        assert not Draft202012Validator(spec).is_valid(value), (name, value)


def test_edge_calls_reach_members_behind_refs_and_nested_models() -> None:
    audit = CallAudit.of(_schemas(), {})
    calls = audit.edge_calls("annotate", None)
    assert calls, "no schema-valid starting call for a tool with a nested model parameter"
    assert {c["mode"] for c in calls} == {"x", 1}
    assert {"", 0, 2**53} <= {c["ref"] for c in calls}
    assert None in {c["due"] for c in calls}
    assert {json.dumps(c["extra"]) for c in calls} >= {"[]", "{}", "false", "0", "0.0", '""'}
    ranked = audit.edge_calls("rank", None)
    assert {c["level"] for c in ranked} == {c["via"] for c in ranked} == {"low", "high"}
    assert {"max", 0, -1} <= {c["score"] for c in ranked}


@pytest.mark.parametrize(
    ("spec", "types"),
    [
        ({}, JSON_TYPES),
        (True, JSON_TYPES),
        (False, ()),
        ({"type": "string"}, ("string",)),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, ("integer", "string")),
        ({"anyOf": [{"type": "number"}, {"type": "null"}]}, ("number", "null")),
        ({"anyOf": [{"type": "number"}, {}]}, JSON_TYPES),
        ({"enum": ["x", 1, 2.0, None]}, ("string", "integer", "null")),
        ({"const": True}, ("boolean",)),
        ({"type": "string", "enum": ["a", 1]}, ("string",)),
        ({"allOf": [{"type": "number"}, {"type": ["integer", "string"]}]}, ("integer",)),
        ({"$ref": "#/$defs/Model"}, ("object",)),
        ({"$ref": "#/$defs/Cycle"}, JSON_TYPES),
        ({"$ref": "#/$defs/Missing"}, JSON_TYPES),
        ({"$ref": "other.json#/x"}, JSON_TYPES),
        ({"$ref": "#/$defs/Model", "type": "null"}, ()),
    ],
)
def test_admitted_types(spec: Any, types: tuple[str, ...]) -> None:
    root = {"$defs": {"Model": {"type": "object"}, "Cycle": {"$ref": "#/$defs/Cycle"}}}
    assert admitted_types(spec, root) == types


def test_a_schema_with_a_dangling_ref_is_a_finding_not_a_crash() -> None:
    from gymforge.qa.checks.common import CheckFailed

    dangling = {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a thing up.",
            "parameters": {
                "type": "object",
                "properties": {"key": {"$ref": "#/$defs/Missing"}},
                "required": ["key"],
            },
        },
    }
    with pytest.raises(
        CheckFailed, match=r"tool lookup: .*\$ref '#/\$defs/Missing' points nowhere"
    ):
        CallAudit.of([dangling], {})
    bad = {**dangling, "function": {**dangling["function"], "parameters": {"type": 7}}}
    with pytest.raises(CheckFailed, match="tool lookup: its parameter schema is not valid"):
        CallAudit.of([bad], {})
    CallAudit.of(_schemas(), {})  # the good schemas, refs and all, pass
