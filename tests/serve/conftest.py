"""Fixtures: servers on ephemeral loopback ports (in a background thread, always stopped)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from serve_helpers import TOKEN

from gymforge.serve.config import TOKEN_ENV, ServeConfig
from gymforge.serve.launch import ServerThread


@pytest.fixture(autouse=True)
def _no_ambient_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)


@pytest.fixture
def start() -> Iterator[Callable[..., ServerThread]]:
    """``start(env="ledger", **ServeConfig fields)``: a running server, stopped at teardown."""
    servers: list[ServerThread] = []

    def make(env: str = "ledger", **config: Any) -> ServerThread:
        server = ServerThread(env, ServeConfig(**config)).start(timeout=20)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def ledger_server() -> Iterator[ServerThread]:
    """One token-protected ledger server, QA hooks on, shared by a module's read-only tests."""
    server = ServerThread("ledger", ServeConfig(token=TOKEN, qa_hooks=True)).start(timeout=20)
    try:
        yield server
    finally:
        server.stop()
