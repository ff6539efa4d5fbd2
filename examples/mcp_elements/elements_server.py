"""A small MCP tool server over a periodic table, written with the MCP SDK's ``MCPServer``.

Run it over stdio (how ``elements_env.py`` starts it): ``python elements_server.py``. It
knows nothing of gymforge: any MCP tool server you already have plugs in the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

ELEMENTS: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("elements.json")).read_text(encoding="utf-8")
)
BY_SYMBOL = {e["symbol"]: e for e in ELEMENTS}
READ_ONLY = ToolAnnotations(read_only_hint=True)

server = MCPServer("elements", instructions="Look up chemical elements.", log_level="WARNING")


@server.tool(annotations=READ_ONLY)
def find_elements(name: str) -> list[dict[str, Any]]:
    """Find elements whose English name contains the text (case-insensitive)."""
    return [e for e in ELEMENTS if name.lower() in e["name"].lower()]


@server.tool(annotations=READ_ONLY)
def element(symbol: str) -> dict[str, Any]:
    """One element by its symbol (case-sensitive, e.g. Na): number, name and atomic mass."""
    found = BY_SYMBOL.get(symbol)
    if found is None:
        raise ToolError(f"no element with symbol {symbol[:20]!r}")  # shown to the agent
    return found


if __name__ == "__main__":
    server.run()
