"""Helpers of the MCP server attacks: a server in a thread, raw streamable-HTTP handshakes
(from any loopback address), and the SDK's client of ``tests/serve``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))

from mcp_helpers import TASK, mcp_client, oracle_plan

from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread
from gymforge.serve.mcp.launch import McpServerThread
from gymforge.testing.served import ServeProcess

__all__ = [
    "TASK",
    "TOKEN",
    "McpServeProcess",
    "http_from",
    "initialize",
    "mcp_client",
    "mcp_server",
    "open_session",
    "oracle_plan",
]

TOKEN = "test-token-0123456789"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "redteam", "version": "1"},
    },
}


def mcp_server(env: str = "ledger", record: Path | None = None, **config: Any) -> ServerThread:
    """An MCP server, started by entering it as a context manager (stopped on exit)."""
    return McpServerThread(env, ServeConfig(**config), record=record)


def http_from(address: str = "127.0.0.1", token: str | None = TOKEN) -> httpx.Client:
    """An HTTP client whose connections come from ``address`` (another loopback address is
    another client to the server), with the bearer token when given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(transport=transport, headers=headers, timeout=10)


def open_session(http: httpx.Client, server: ServerThread) -> httpx.Response:
    return http.post(f"{server.http_url}/sessions")


def initialize(http: httpx.Client, url: str) -> httpx.Response:
    """One handshake-era ``initialize`` (it opens a transport session in the server)."""
    headers = {"Accept": "application/json, text/event-stream"}
    return http.post(url, json=INITIALIZE, headers=headers)


class McpServeProcess(ServeProcess):
    """``gymforge serve ENV --mcp ARGS --port 0`` in a subprocess of this checkout, its
    port read from the banner (bounded wait); ``stop`` sends SIGTERM (a graceful shutdown)."""

    def __init__(self, *args: str, env: dict[str, str], timeout: float = 60.0) -> None:
        root = Path(__file__).resolve().parents[2]
        full = dict(os.environ, PYTHONPATH=str(root), **env)
        super().__init__(
            *args, "--mcp", timeout=timeout, env=full, cwd=root, banner=self.MCP_BANNER
        )

    def stop(self, grace: float = 30.0) -> int:
        return super().stop(grace)
