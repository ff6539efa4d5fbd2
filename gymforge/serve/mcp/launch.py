"""Starting MCP servers: over streamable HTTP (``serve_http``, ``McpServerThread``) or over
stdio (``serve_stdio``: the process is one session, for clients that spawn their server)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.server.stdio import stdio_server

from gymforge.core.errors import UserError
from gymforge.registry.handle import open_env
from gymforge.registry.resolve import resolve_factory
from gymforge.serve.binding import bind
from gymforge.serve.config import ServeConfig, check_binding
from gymforge.serve.hub import Hub
from gymforge.serve.launch import ServerThread, raise_fd_limit, uvicorn_config
from gymforge.serve.mcp.http import SESSION_PATH, create_mcp_app
from gymforge.serve.mcp.server import CURRENT, build_server
from gymforge.serve.mcp.session import McpSession
from gymforge.serve.meta import EnvCatalog
from gymforge.serve.metrics import Metrics
from gymforge.serve.record import Recorder, serve_recorder


def catalog_for(env: str, config: ServeConfig, dataset: Path | None = None) -> EnvCatalog:
    if env.startswith(("ws://", "wss://")):
        raise UserError("serve a local environment (id or import path), not a remote one")
    factory = resolve_factory(env) if dataset is None else open_env(env, dataset).factory
    return EnvCatalog(factory, env, qa_hooks=False, fault_injection=False)


def recorder_of(
    catalog: EnvCatalog, transport: str, record: Path | None, seal_key: bytes | None
) -> Recorder:
    """The recorder of ``--record`` (``gymforge.serve.record``), sealed with ``seal_key``."""
    return serve_recorder(record, seal_key, f"mcp-{transport}", catalog.spec.id)


def build_mcp_app(
    env: str,
    config: ServeConfig,
    record: Path | None = None,
    dataset: Path | None = None,
    seal_key: bytes | None = None,
) -> Any:
    catalog = catalog_for(env, config, dataset)
    return create_mcp_app(catalog, config, recorder_of(catalog, "http", record, seal_key))


def serve_http(
    env: str,
    host: str,
    port: int,
    config: ServeConfig,
    log_level: str = "warning",
    dataset: Path | None = None,
    record: Path | None = None,
    seal_key: bytes | None = None,
) -> None:
    """Run the streamable-HTTP MCP server until interrupted (the record is sealed with
    ``seal_key`` when given, its run seal written at shutdown)."""
    check_binding(host, config.token)
    raise_fd_limit(config.max_sessions)
    app = build_mcp_app(env, config, record, dataset, seal_key)
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{sock.getsockname()[1]}"
    auth = "bearer token required" if config.token else "no auth (loopback only)"
    print(
        f"gymforge serve --mcp: {app.state.hub.catalog.spec.id} on {base}; open a session "
        f"with POST {base}/sessions, then speak MCP at {base}{SESSION_PATH}; {auth}; "
        f"max {config.max_sessions} sessions ({config.client_cap} per client), "
        f"idle timeout {config.idle_timeout:g} s",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.Server(uvicorn_config(app, config, log_level)).run(sockets=[sock])


def McpServerThread(
    env: str,
    config: ServeConfig | None = None,
    record: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    seal_key: bytes | None = None,
) -> ServerThread:
    """A streamable-HTTP MCP server in a daemon thread (tests, benchmarks)."""
    config = config or ServeConfig()
    app = build_mcp_app(env, config, record, seal_key=seal_key)
    return ServerThread(env, config, host, port, app=app)


def serve_stdio(
    env: str,
    config: ServeConfig,
    dataset: Path | None = None,
    record: Path | None = None,
    seal_key: bytes | None = None,
) -> None:
    """Serve one session over this process's stdin/stdout until the client closes them, the
    session is reaped (idle: the process exits, status 0) or the process is interrupted.
    Nothing else goes to stdout."""
    catalog = catalog_for(env, config, dataset)
    recorder = recorder_of(catalog, "stdio", record, seal_key)
    print(
        f"gymforge serve --mcp --transport stdio: {catalog.spec.id}, "
        f"idle timeout {config.idle_timeout:g} s",
        file=sys.stderr,
        flush=True,
    )
    try:
        anyio.run(_stdio_main, catalog, config, recorder)
    finally:
        recorder.close()  # idempotent: normally done at the session's end


async def _stdio_main(catalog: EnvCatalog, config: ServeConfig, recorder: Recorder) -> None:
    hub = Hub(catalog, config, Metrics(max_sessions=1), recorder)
    server = build_server(catalog.spec.id, catalog.spec.version, catalog.tools, catalog.tasks)
    session = McpSession(hub, ("stdio", ""), recorder)
    hub.enter(session, session.client)
    CURRENT.set(session)
    hub.start()

    async def shutdown() -> None:
        await hub.stop()  # writes the open episode, if any
        await catalog.probe.close()
        await recorder.finish()

    async def watch() -> None:
        while session.killed is None:
            await anyio.sleep(0.2)
        # Reaped: the session is over, and so is the process. The transport's reader is a
        # thread blocked in a read of stdin that nothing can cancel, so exit rather than wait.
        await shutdown()
        print(f"gymforge serve --mcp: session {session.killed}; exiting", file=sys.stderr)
        sys.stderr.flush()
        os._exit(0)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()  # the client closed stdin
    finally:
        await shutdown()
