"""An MCP tool server for the toolset tests, written with the SDK's ``MCPServer``: it counts
the calls it receives, so a test can tell a call that reached it from one that did not."""

from __future__ import annotations

import os
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

READ = types.ToolAnnotations(read_only_hint=True)
RECEIVED: list[str] = []
NOTES: dict[str, str] = {}

server = MCPServer("toolset-test", log_level="WARNING")


@server.tool(annotations=READ)
def echo(text: str, times: int = 1) -> dict[str, Any]:
    """Repeat the text."""
    RECEIVED.append("echo")
    return {"text": text * times}


@server.tool()
def write_note(key: str, body: str) -> dict[str, Any]:
    """Store a note (a write)."""
    RECEIVED.append("write_note")
    NOTES[key] = body
    return {"stored": key, "notes": len(NOTES)}


@server.tool()
def refuse(reason: str) -> dict[str, Any]:
    """Always fails with the reason (an isError result with text only)."""
    RECEIVED.append("refuse")
    raise ToolError(reason)


@server.tool()
def missing(key: str) -> types.CallToolResult:
    """Fails with a structured error whose kind is gymforge's not_found."""
    RECEIVED.append("missing")
    error = {"kind": "not_found", "message": f"no note {key}", "retryable": False}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"no note {key}")],
        structured_content={"error": error},
        is_error=True,
    )


@server.tool()
def received() -> dict[str, Any]:
    """How many calls the server has received (this one not counted), and its pid."""
    return {"calls": list(RECEIVED), "pid": os.getpid()}


if __name__ == "__main__":
    server.run()
