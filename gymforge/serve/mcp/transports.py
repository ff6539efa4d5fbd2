"""Each MCP session's own transport sessions, so no client can exhaust another's.

A handshake-era MCP client opens a *transport session* (``initialize``, answered with an
``Mcp-Session-Id``) inside the gymforge session whose URL it speaks to; the SDK keeps each
one until it has been idle for ``--idle-timeout``. Were they drawn from one pool shared by
the server, one client could ``initialize`` until the pool is full and every other
client's handshake would be refused (503) for the whole idle timeout. So every gymforge
session runs its own SDK session manager holding at most ``TRANSPORTS_PER_SESSION``
transport sessions: one more ``initialize`` on that session gets 503, the other sessions
are untouched. A client's share is therefore bounded by its session cap
(``--max-sessions-per-client``) times ``TRANSPORTS_PER_SESSION``, and a session's
transports end with it (``stop``), never outliving it.
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from gymforge.serve.config import ServeConfig

TRANSPORTS_PER_SESSION = 4
"""Transport sessions one gymforge session may hold at once (a client reconnecting a few
times while old ones idle out fits; a flood does not)."""


class SessionTransports:
    """The SDK session manager of one gymforge session: ``start`` it in the application's
    task group, route the session's MCP requests through ``handle``, ``stop`` it with the
    session (its transport sessions are terminated then)."""

    def __init__(self, server: Server[Any], config: ServeConfig) -> None:
        self.manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            max_request_body_size=config.max_message_bytes,
            session_idle_timeout=config.idle_timeout,
            max_sessions=TRANSPORTS_PER_SESSION,
        )
        self._done = anyio.Event()

    async def start(self, group: TaskGroup) -> None:
        """Run the manager in ``group`` until ``stop``; returns once it is serving."""
        await group.start(self._run)

    async def _run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with self.manager.run():
            task_status.started()
            await self._done.wait()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request of the session (404 once the session has ended)."""
        if self._done.is_set():
            body = {"error": {"code": "unknown_session", "message": "the session has ended"}}
            await JSONResponse(body, status_code=404)(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)

    async def stop(self) -> None:
        self._done.set()
