"""Tool contracts: typed tools, structured results and seeded fault injection.

``ToolError`` (defined in ``gymforge.core.errors``) is what a tool raises for a failure the
agent should see; it is re-exported here beside ``tool``."""

from gymforge.core.errors import ToolError
from gymforge.tools.faults import FAULT_KINDS, NO_FAULTS, FaultKind, FaultPlan
from gymforge.tools.result import ToolErrorInfo, ToolResult
from gymforge.tools.tool import Tool, parse_docstring, tool, tools_of
from gymforge.tools.toolset import Toolset

__all__ = [
    "FAULT_KINDS",
    "NO_FAULTS",
    "FaultKind",
    "FaultPlan",
    "Tool",
    "ToolError",
    "ToolErrorInfo",
    "ToolResult",
    "Toolset",
    "parse_docstring",
    "tool",
    "tools_of",
]
