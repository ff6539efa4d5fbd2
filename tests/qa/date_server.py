"""An MCP stdio tool server that answers with today's date (as ``mcp-server-time`` does)."""

from __future__ import annotations

import datetime

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("dates", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def today() -> str:
    """Today's date, ISO 8601."""
    return datetime.date.today().isoformat()


if __name__ == "__main__":
    server.run()
