"""A ``Toolset`` of an MCP server's tools, so environments can be built on MCP tool servers.

``McpToolset(connection)`` lists the server's tools once and makes each a gymforge ``Tool``:

- **schema**: the server's ``inputSchema``, unchanged, is the tool's ``parameters``;
- **validation**: arguments are checked against that schema (JSON Schema, the draft it
  declares) before the call; a call that does not fit is an ``invalid_arguments`` error and
  never reaches the server. Properties the schema does not declare are refused, and an
  optional property given as ``null`` counts as left out;
- **results**: ``structuredContent`` when the server sends it, else the text content (one
  block as a string, several as a list); an ``isError`` result is a ``ToolError`` whose
  kind is the result's ``structuredContent.error.kind`` when that is a gymforge kind, else
  ``validation`` (the tool refused the call). A JSON-RPC error from the live server is
  ``unknown_tool``/``invalid_arguments``/``internal`` by its code;
- **writes**: a tool is a read when its annotations say ``readOnlyHint`` or the
  environment declares it read-only (``read_only=[names]``: many servers annotate nothing,
  and the environment, which chose the server, knows what its tools do); anything else may
  write (read faults such as ``empty`` and ``stale`` only fire on reads, and QA's
  ``truncation_accounting`` stalls with a read);
- everything else is the ``Toolset``'s: ``FaultPlan`` faults, call accounting, structured
  errors, and the calls recorded in trajectories by the environment;
- a server that dies or stops answering raises ``InfraError`` out of the step
  (``gymforge.tools.mcp_connection``): the episode is retried, never scored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema
import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model, model_validator
from pydantic_core import PydanticCustomError

from gymforge.core.errors import TOOL_ERROR_KINDS, ToolError, ToolErrorKind, UserError
from gymforge.tools.mcp_connection import McpCallError, McpConnection
from gymforge.tools.tool import Tool
from gymforge.tools.toolset import Toolset

_CALL_ERROR_KINDS: dict[int, ToolErrorKind] = {
    types.METHOD_NOT_FOUND: "unknown_tool",
    types.INVALID_PARAMS: "invalid_arguments",
}
_EMPTY_OF: dict[str, Any] = {"array": list, "object": dict, "string": str}


def _validator_for(schema: dict[str, Any], tool: str) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as err:
        raise UserError(f"MCP tool {tool!r} has an invalid inputSchema: {err.message}") from err
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


def args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model of ``schema``'s arguments whose validation is the JSON Schema's."""
    validator = _validator_for(schema, name)
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())

    def check(cls: type[BaseModel], data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if not (v is None and k not in required)}
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            where = ".".join(str(p) for p in first.absolute_path)
            message = f"{where}: {first.message[:300]}" if where else first.message[:300]
            raise PydanticCustomError("json_schema", "{message}", {"message": message})
        return data

    fields: dict[str, Any] = {
        key: (Any, Field(... if key in required else None)) for key in props if key.isidentifier()
    }
    if len(fields) != len(props):
        raise UserError(f"MCP tool {name!r}: argument names must be identifiers: {sorted(props)}")
    return create_model(
        f"{name}_args",
        __config__=ConfigDict(extra="forbid"),
        __validators__={"_schema": model_validator(mode="before")(check)},  # type: ignore[dict-item]
        **fields,
    )


def _content(result: types.CallToolResult) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    return texts[0] if len(texts) == 1 else texts


def _error_of(result: types.CallToolResult) -> ToolError:
    info = (result.structured_content or {}).get("error")
    kind: ToolErrorKind = "validation"
    retryable = False
    if isinstance(info, dict):
        if info.get("kind") in TOOL_ERROR_KINDS:
            kind = info["kind"]
        retryable = info.get("retryable") is True
    text = _content(result) if result.structured_content is None else info
    message = text.get("message", text) if isinstance(text, dict) else text
    return ToolError(kind, str(message)[:2000] or "the tool failed", retryable=retryable)


def mcp_tool(spec: types.Tool, connection: McpConnection, *, read_only: bool = False) -> Tool:
    """The gymforge ``Tool`` calling ``spec`` on ``connection``; a read when ``read_only``
    (declared by the environment) or when the server's annotations say so."""
    schema = dict(spec.input_schema)
    model = args_model(spec.name, schema)
    required = set(schema.get("required") or ())
    out_type = (spec.output_schema or {}).get("type")
    hinted = spec.annotations is not None and spec.annotations.read_only_hint is True
    read_only = read_only or hinted

    async def call(**kwargs: Any) -> Any:
        arguments = {k: v for k, v in kwargs.items() if v is not None or k in required}
        try:
            result = await connection.call_tool(spec.name, arguments)
        except McpCallError as err:
            kind = _CALL_ERROR_KINDS.get(err.code, "internal")
            raise ToolError(kind, f"the server refused the call: {str(err)[:1000]}") from err
        if result.is_error:
            raise _error_of(result)
        return _content(result)

    return Tool(
        name=spec.name,
        description=spec.description or spec.title or spec.name,
        args_model=model,
        returns=TypeAdapter(Any),
        return_annotation=_EMPTY_OF.get(str(out_type), Any),
        fn=call,
        writes=not read_only,
        takes_self=False,
        parameters={**schema, "properties": schema.get("properties") or {}},
    )


class McpToolset(Toolset):
    """The tools of an MCP server (``only``: a subset, by name, in that order;
    ``read_only``: tools the environment declares read-only, whatever their annotations).
    The connection belongs to the caller, who closes it; see the module docstring."""

    def __init__(
        self,
        connection: McpConnection,
        *,
        only: Iterable[str] | None = None,
        read_only: Iterable[str] = (),
    ) -> None:
        specs = {t.name: t for t in connection.list_tools()}
        names = list(only) if only is not None else list(specs)
        reads = set(read_only)
        missing = [n for n in [*names, *sorted(reads)] if n not in specs]
        if missing:
            raise UserError(f"MCP server {connection.label} has no tools {missing}")
        unused = sorted(reads - set(names))
        if unused:
            raise UserError(f"read_only names tools not in the toolset: {unused}")
        self.connection = connection
        tools = [mcp_tool(specs[n], connection, read_only=n in reads) for n in names]
        super().__init__(connection, tools)
