"""The MCP endpoint through which an outside harness calls one episode's tools.

The runner owns the environment; the harness owns its loop. Each harness-driven episode
gets a :class:`Channel` and an MCP URL, ``http://HOST:PORT/mcp/<channel>`` (streamable
HTTP, the episode's bearer token), that lists the episode's tools (from its reset
observation) and turns each ``tools/call`` into an event the episode's policy receives
(:class:`~gymforge.serve.harness.episode.HarnessPolicy`): the policy returns it to the
runner as a ``ToolCall`` action and answers the call with what the environment said. So
every tool call is one ordinary step, recorded and replayable like any other; a call to a
tool the environment does not have is a step too, answered with its structured error.

Each channel has a bearer token of its own (``Channel.token``, the episode's token, which
the harness also holds for its proxy URL): a request to a channel with any other token,
another episode's included, is refused (401/403) before the MCP layer sees it, and a
request to a channel that does not exist is a 404. Calls on a closed channel (the episode
ended) get an ``isError`` result saying so. A workspace episode's channel (``shell=True``)
has no MCP tools: its one route is the shell endpoint (:mod:`~gymforge.serve.harness.shell`),
each command a step of the environment's shell tool. The
server runs on its own event loop in a thread; a channel hands events across to the loop
its episode runs on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from gymforge.serve.config import ServeConfig, auth_problem
from gymforge.serve.harness.shell import SHELL_PATH, shell_endpoint, shell_url
from gymforge.serve.launch import ServerThread
from gymforge.serve.mcp.http import SESSION_PATH, AsgiEndpoint, session_url
from gymforge.serve.mcp.session import error_result

CURRENT: contextvars.ContextVar[Channel | None] = contextvars.ContextVar(
    "gymforge_harness_channel", default=None
)
"""The channel of the request being handled."""

Event = tuple[str, Any, Any, "concurrent.futures.Future[Any] | None"]
"""``(kind, a, b, answer)``: ``("call", name, arguments, answer)`` from the harness (a tool
call; a shell command as ``("shell", command, None, answer)``), or
``("done", final_text, None, None)`` / ``("crashed", error, None, None)`` from its runner.
``answer`` gets an MCP ``CallToolResult`` (a shell command: its outcome's JSON, or None
when the episode ended first)."""


@dataclass
class Channel:
    """One episode's tool channel. Made on the episode's loop; ``call`` runs on the
    bridge's loop and waits for the episode's answer."""

    loop: asyncio.AbstractEventLoop
    tools: list[types.Tool]
    id: str = field(default_factory=lambda: secrets.token_hex(16))
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    events: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    closed: bool = False
    shell: bool = False

    def put(self, event: Event) -> None:
        """Queue an event from any thread."""
        self.loop.call_soon_threadsafe(self.events.put_nowait, event)

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if self.closed:
            return error_result("closed", "the episode has ended; no more tool calls")
        answer: concurrent.futures.Future[types.CallToolResult] = concurrent.futures.Future()
        self.put(("call", name, arguments, answer))
        return await asyncio.wrap_future(answer)

    async def run(self, command: str) -> dict[str, Any] | None:
        """One shell command: its outcome's JSON, or None when the episode ended first."""
        if self.closed:
            return None
        answer: concurrent.futures.Future[dict[str, Any] | None] = concurrent.futures.Future()
        self.put(("shell", command, None, answer))
        return await asyncio.wrap_future(answer)


def mcp_tool_list(openai_tools: tuple[dict[str, Any], ...]) -> list[types.Tool]:
    """An observation's OpenAI-style tool schemas as MCP tools."""
    out = []
    for t in openai_tools:
        fn = t.get("function", t)
        out.append(
            types.Tool(
                name=str(fn["name"]),
                description=str(fn.get("description") or ""),
                input_schema=dict(fn.get("parameters") or {"type": "object"}),
            )
        )
    return out


class HarnessBridge:
    """The MCP server of every harness-driven episode of a run (module docstring)."""

    def __init__(self, token: str, host: str = "127.0.0.1") -> None:
        self.token = token  # the server's own; requests need their channel's token
        self.channels: dict[str, Channel] = {}
        self._thread = ServerThread(
            "harness-bridge", ServeConfig(token=token), host, app=self._app()
        )

    @property
    def url(self) -> str:
        return self._thread.http_url

    def start(self) -> HarnessBridge:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._thread.stop()

    def open(
        self,
        loop: asyncio.AbstractEventLoop,
        tools: list[types.Tool],
        token: str | None = None,
        shell: bool = False,
    ) -> Channel:
        """A new channel; ``token`` is its bearer token (default: a fresh random one);
        ``shell``: a workspace episode's (its shell endpoint, no MCP tools)."""
        channel = Channel(loop, tools, shell=shell)
        if token is not None:
            channel.token = token
        self.channels[channel.id] = channel
        return channel

    def close(self, channel: Channel) -> None:
        channel.closed = True
        self.channels.pop(channel.id, None)

    def channel_url(self, channel: Channel) -> str:
        """The channel's MCP URL, or its shell URL for a workspace episode."""
        if channel.shell:
            return shell_url(self.url, channel.id)
        return session_url(self.url, channel.id)

    def _app(self) -> Starlette:
        def channel_of() -> Channel | None:
            return CURRENT.get()

        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            channel = channel_of()
            return types.ListToolsResult(tools=channel.tools if channel is not None else [])

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            channel = channel_of()
            if channel is None:
                return error_result("closed", "no such episode (it has ended?)")
            return await channel.call(params.name, dict(params.arguments or {}))

        server: Server[Any] = Server(
            "gymforge-harness",
            instructions="The tools of one gymforge episode. Finish by giving your final answer.",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )
        server.middleware = []
        manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)

        async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            conn = HTTPConnection(scope)
            channel = self.channels.get(conn.path_params.get("session", ""))
            if channel is None or channel.closed or channel.shell:
                body = {"error": "no such episode (it has ended?)"}
                await JSONResponse(body, status_code=404)(scope, receive, send)
                return
            problem = auth_problem(conn.headers.get("authorization"), channel.token)
            if problem is not None:
                status = 401 if problem.startswith("missing") else 403
                await JSONResponse({"error": problem}, status_code=status)(scope, receive, send)
                return
            token = CURRENT.set(channel)  # the request's server task inherits it
            try:
                await manager.handle_request(scope, receive, send)
            finally:
                CURRENT.reset(token)

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with manager.run():
                yield

        async def shell(request: Request) -> Response:
            return await shell_endpoint(request, self.channels.get(request.path_params["session"]))

        routes = [
            Route(SESSION_PATH, AsgiEndpoint(endpoint)),
            Route(SHELL_PATH, shell, methods=["POST"]),
        ]
        return Starlette(routes=routes, lifespan=lifespan)
