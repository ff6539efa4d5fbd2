"""An MCP stdio tool server whose tools carry no annotations (no ``readOnlyHint``)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("squares", log_level="WARNING")


@server.tool()
def square(n: int) -> int:
    """``n`` squared."""
    return n * n


if __name__ == "__main__":
    server.run()
