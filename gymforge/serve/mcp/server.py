"""The MCP ``Server`` (the SDK's low-level server) that routes each call to its session.

One ``Server`` serves every session; which session a request belongs to is set by the
transport before the request is handled (``CURRENT``): the URL's session id over HTTP, the
process's one session over stdio.
"""

from __future__ import annotations

import contextvars
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

from gymforge.serve.mcp.session import McpSession, error_result
from gymforge.serve.mcp.tools import mcp_tools
from gymforge.tasks.source import TaskSource

CURRENT: contextvars.ContextVar[McpSession | None] = contextvars.ContextVar(
    "gymforge_mcp_session", default=None
)
"""The session of the request being handled."""


def build_server(
    name: str,
    version: str,
    env_tools: list[dict[str, Any]] | None,
    tasks: TaskSource | None = None,
) -> Server[Any]:
    """The MCP server of an environment whose tools are ``env_tools`` (``EnvCatalog.tools``)
    and whose tasks are ``tasks`` (``EnvCatalog.tasks``)."""
    tools = types.ListToolsResult(tools=mcp_tools(env_tools, tasks))

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tools

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = CURRENT.get()
        if session is None:
            return error_result("closed", "no session: open one with POST /sessions")
        return await session.call(params.name, dict(params.arguments or {}))

    server: Server[Any] = Server(
        f"gymforge-{name}",
        version=version,
        instructions=(
            "A gymforge environment. gymforge_tasks lists task ids; call "
            "gymforge_reset(task_id, seed) to start an episode, "
            "use the tools, then gymforge_submit(reply). Every result's structuredContent "
            "carries reward, reward_components, terminated and truncated."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware = []  # no tracing span per message: a step is on the hot path
    return server
