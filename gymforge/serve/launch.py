"""Starting servers: from the CLI (blocking), or in a background thread (tests, benchmarks).

The listening socket is bound before uvicorn starts, so port 0 gives an ephemeral port that
is known before the first request, and a bind failure is an immediate, readable error.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from gymforge.core.errors import UserError
from gymforge.registry.handle import open_env
from gymforge.registry.resolve import resolve_factory
from gymforge.serve.app import create_app
from gymforge.serve.binding import bind as bind  # re-exported: the old import path
from gymforge.serve.config import ServeConfig, check_binding
from gymforge.serve.meta import EnvCatalog
from gymforge.serve.record import serve_recorder
from gymforge.serve.ws_fast import session_protocol

PING_INTERVAL_S = 20.0
"""Transport keep-alive: a peer that misses a pong for this long is dropped (half-open)."""


def build_app(
    env: str,
    config: ServeConfig,
    dataset: Path | None = None,
    record: Path | None = None,
    seal_key: bytes | None = None,
) -> Any:
    """The app serving environment ``env`` (a built-in id or an import path), with the tasks
    of ``dataset`` (a JSONL file, hash-pinned, loaded once) when given; with ``record``
    every episode a session starts is appended there (sealed with ``seal_key``)."""
    if env.startswith(("ws://", "wss://")):
        raise UserError("serve a local environment (id or import path), not a remote one")
    factory = resolve_factory(env) if dataset is None else open_env(env, dataset).factory
    catalog = EnvCatalog(
        factory,
        env,
        qa_hooks=config.qa_hooks,
        fault_injection=config.fault_injection,
    )
    return create_app(catalog, config, serve_recorder(record, seal_key, "ws", catalog.spec.id))


def uvicorn_config(app: Any, config: ServeConfig, log_level: str = "warning") -> uvicorn.Config:
    """uvicorn's settings for ``app``: its event loop is uvloop when installed (``loop``
    auto), and an app with a session route (``create_app``'s) has that route served by
    ``gymforge.serve.ws_fast``, the others by uvicorn's own WebSocket protocol."""
    state = getattr(app, "state", None)
    route = getattr(state, "session_route", None)
    ws: Any = "auto" if route is None else session_protocol(state.hub, route)  # type: ignore[union-attr]
    return uvicorn.Config(
        app,
        ws=ws,
        lifespan="on",
        log_level=log_level,
        access_log=False,
        ws_max_size=config.transport_max_bytes,
        ws_ping_interval=PING_INTERVAL_S,
        ws_ping_timeout=PING_INTERVAL_S,
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=5,
    )


def raise_fd_limit(max_sessions: int) -> None:
    """Lift the soft open-files limit to what ``max_sessions`` sockets need (best effort)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2 * max_sessions + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        target = want if hard == resource.RLIM_INFINITY else min(want, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def serve(
    env: str,
    host: str,
    port: int,
    config: ServeConfig,
    log_level: str = "warning",
    dataset: Path | None = None,
    record: Path | None = None,
    seal_key: bytes | None = None,
) -> None:
    """Run until interrupted (the ``gymforge serve`` command)."""
    check_binding(host, config.token)
    raise_fd_limit(config.max_sessions)
    app = build_app(env, config, dataset, record, seal_key)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    auth = "bearer token required" if config.token else "no auth (loopback only)"
    print(
        f"gymforge serve: {app.state.hub.catalog.spec.id} on ws://{shown}:{bound}/ws "
        f"(http://{shown}:{bound}); {auth}; max {config.max_sessions} sessions "
        f"({config.client_cap} per client), idle timeout {config.idle_timeout:g} s, "
        f"QA hooks {'on' if config.qa_hooks else 'off'}",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.Server(uvicorn_config(app, config, log_level)).run(sockets=[sock])


class ServerThread:
    """A server on ``host`` (loopback by default) and an ephemeral port, in a daemon thread.

    ``with ServerThread("ledger", ServeConfig(...)) as srv: srv.url`` -- always stopped.
    ``app`` serves another application built for ``env`` (the MCP one) instead.
    """

    def __init__(
        self,
        env: str,
        config: ServeConfig | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        dataset: Path | None = None,
        app: Any = None,
    ) -> None:
        self.config = config or ServeConfig()
        check_binding(host, self.config.token)
        self.app = app if app is not None else build_app(env, self.config, dataset)
        self.host = host
        self._sock = bind(host, port)
        self.port: int = self._sock.getsockname()[1]
        self._server = uvicorn.Server(uvicorn_config(self.app, self.config, log_level))
        # the server's thread sees the creator's run services (gymforge.verify.services)
        self._thread = threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._server.run,),
            kwargs={"sockets": [self._sock]},
            daemon=True,
        )

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def hub(self) -> Any:
        return self.app.state.hub

    def start(self, timeout: float = 15.0) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the server did not start within {timeout:g} s")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
