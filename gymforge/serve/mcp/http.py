"""``gymforge serve ENV --mcp``: the environment as an MCP server over streamable HTTP.

Routes (every one but ``/health`` needs ``Authorization: Bearer <token>`` when the server
has a token: missing 401 with ``WWW-Authenticate: Bearer``, wrong 403; a browser ``Origin``
not in ``--allow-origin`` 403):

- ``GET /health``: liveness, never authenticated.
- ``POST /sessions``: open a session (one environment instance, admitted under the same
  capacity rules as the WebSocket server: 503 ``capacity`` when full). Answers 201 with
  ``{"session": ID, "url": "http://HOST:PORT/mcp/ID", "token": T, "idle_timeout_s": ...}``.
- ``/mcp/{ID}``: the session's MCP endpoint (streamable HTTP, either protocol era; JSON
  responses). Hand this URL, with the session's own token ``T`` as a bearer header, to the
  agent's MCP client: ``T`` opens this endpoint and nothing else (no other session, no
  ``POST /sessions``), so an agent handed one session has no side session to try answers
  in. The server's token opens it too (an operator's). An unknown, closed or reaped ID is
  404.
- ``DELETE /sessions/{ID}``: close the session and release its environment.
- ``GET /metrics``: the server's metrics (JSON), as for the WebSocket server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from gymforge.serve.config import ServeConfig, auth_problem
from gymforge.serve.hub import Hub, client_key
from gymforge.serve.mcp.server import CURRENT, build_server
from gymforge.serve.mcp.session import McpSession
from gymforge.serve.mcp.transports import SessionTransports
from gymforge.serve.meta import EnvCatalog
from gymforge.serve.metrics import Metrics
from gymforge.serve.record import Recorder

SESSION_PATH = "/mcp/{session}"
"""The per-session MCP endpoint's path (see ``session_url``)."""


def session_url(base: str, session_id: str) -> str:
    """The MCP URL of a session, ``base`` being ``http://HOST:PORT``."""
    return base.rstrip("/") + SESSION_PATH.format(session=session_id)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


def _refusal(conn: HTTPConnection, config: ServeConfig, metrics: Metrics) -> Response | None:
    """The response refusing an unauthenticated request or a foreign Origin, else None."""
    origin = conn.headers.get("origin")
    if origin is not None and origin not in config.allowed_origins:
        metrics.auth_failures += 1
        return _error(403, "unauthorized", f"Origin {origin[:100]!r} is not allowed")
    problem = auth_problem(conn.headers.get("authorization"), config.token)
    if problem is None:
        return None
    metrics.auth_failures += 1
    if problem.startswith("missing"):
        return _error(401, "unauthorized", problem, {"WWW-Authenticate": "Bearer"})
    return _error(403, "unauthorized", problem)


def _holds(conn: HTTPConnection, config: ServeConfig, session_token: str) -> bool:
    """Whether ``conn`` presents ``session_token``, from no Origin or an allowed one."""
    origin = conn.headers.get("origin")
    if origin is not None and origin not in config.allowed_origins:
        return False
    return auth_problem(conn.headers.get("authorization"), session_token) is None


def create_mcp_app(catalog: EnvCatalog, config: ServeConfig, recorder: Recorder) -> Starlette:
    """The application serving ``catalog``'s environment over MCP under ``config``."""
    metrics = Metrics(max_sessions=config.max_sessions)
    hub = Hub(catalog, config, metrics, recorder)
    server = build_server(catalog.spec.id, catalog.spec.version, catalog.tools, catalog.tasks)
    # The episode is the URL's; a handshake-era client also gets transport sessions inside
    # it (kept open: a new transport per request costs ~4x the round trip), from the
    # session's own bounded pool (``gymforge.serve.mcp.transports``).
    groups: list[TaskGroup] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.start()
        try:
            async with anyio.create_task_group() as group:
                groups.append(group)
                try:
                    yield
                finally:
                    groups.clear()
                    await hub.stop()  # stops every session's transports: the group can end
        finally:
            await catalog.probe.close()
            await recorder.finish()

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "transport": "mcp"})

    async def open_session(request: Request) -> Response:
        refused = _refusal(request, config, metrics)
        if refused is not None:
            return refused
        client = client_key(request, config.token)
        full = hub.capacity_problem(client)
        if full is not None:
            return _error(503, "capacity", full, {"Retry-After": "1"})
        try:
            session = McpSession(hub, client, recorder)
        except Exception as err:
            metrics.errors["env_error"] += 1
            text = f"could not create the environment: {type(err).__name__}: {err}"
            return _error(500, "env_error", text)
        hub.enter(session, client)  # the slot is held before the await below
        if not groups:  # shutting down
            await hub.leave(session, client)
            return _error(503, "capacity", "the server is shutting down")
        transports = SessionTransports(server, config)
        session.transports = transports
        await transports.start(groups[0])
        body = {
            "session": session.id,
            "url": session_url(str(request.base_url), session.id),
            "token": session.token,
            "env": catalog.spec.id,
            "idle_timeout_s": config.idle_timeout,
        }
        return JSONResponse(body, status_code=201)

    async def close_session(request: Request) -> Response:
        refused = _refusal(request, config, metrics)
        if refused is not None:
            return refused
        session = _session(hub, request.path_params["session"])
        if session is None:
            return _error(404, "unknown_session", "no such session (closed or reaped?)")
        await session.close()
        return JSONResponse({"closed": session.id})

    async def get_metrics(request: Request) -> Response:
        refused = _refusal(request, config, metrics)
        return refused if refused is not None else JSONResponse(metrics.as_json())

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        conn = HTTPConnection(scope)
        session = _session(hub, conn.path_params.get("session", ""))
        own = session is not None and _holds(conn, config, session.token)
        refused = None if own else _refusal(conn, config, metrics)
        if refused is None and session is None:
            refused = _error(404, "unknown_session", "no such session (closed or reaped?)")
        if refused is not None:
            await refused(scope, receive, send)
            return
        assert session is not None
        session.touch()  # any request is activity: the reaper counts idleness from here
        token = CURRENT.set(session)
        try:
            transports = session.transports
            if isinstance(transports, SessionTransports):
                await transports.handle(scope, receive, send)
            else:  # released between the lookup and here
                await _error(404, "unknown_session", "the session has ended")(scope, receive, send)
        finally:
            CURRENT.reset(token)

    routes: list[Route | Mount] = [
        Route("/health", health, methods=["GET"]),
        Route("/sessions", open_session, methods=["POST"]),
        Route("/sessions/{session}", close_session, methods=["DELETE"]),
        Route("/metrics", get_metrics, methods=["GET"]),
        Route(SESSION_PATH, AsgiEndpoint(endpoint)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.hub = hub
    return app


class AsgiEndpoint:
    """An ASGI callable Starlette routes as an app (a plain function it would wrap)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _session(hub: Hub, session_id: str) -> McpSession | None:
    found: Any = hub.sessions.get(session_id)
    return found if isinstance(found, McpSession) and found.killed is None else None
