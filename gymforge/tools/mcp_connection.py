"""A live connection to an MCP tool server, usable from any thread and any event loop.

The SDK's client is an anyio context: it must be entered and left by one task. Episodes,
QA checks and servers each run their own loops, so the connection keeps the client in a
thread of its own, with its own loop, and every call crosses over to it. The client is
opened on first use and reopened after a failure, so one dead server fails the calls in
flight (``InfraError``: the runner retries the episode) and the next episode gets a new one.

Errors: a server that cannot be started, dies, closes the connection or does not answer
within ``call_timeout`` is an ``InfraError``; a JSON-RPC error the live server answers
with is an ``McpCallError`` (the call was refused, the connection is fine).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from gymforge.core.errors import InfraError

_T = TypeVar("_T")

_TRANSPORT_CODES = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})


class McpCallError(Exception):
    """The live server answered a call with a JSON-RPC error (``code``, ``message``)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class McpConnection:
    """One MCP server: a command to spawn over stdio (``StdioServerParameters``) or a
    streamable-HTTP URL (with ``headers``, e.g. a bearer token)."""

    def __init__(
        self,
        server: StdioServerParameters | str,
        *,
        headers: dict[str, str] | None = None,
        call_timeout: float = 30.0,
        connect_timeout: float = 30.0,
    ) -> None:
        self.server = server
        self.headers = dict(headers or {})
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.label = server if isinstance(server, str) else " ".join([server.command, *server.args])
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="gymforge-mcp", daemon=True
        )
        self._thread.start()
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self.connects = 0
        self.closed = False

    # ---- called from outside the connection's thread -------------------------------------
    def list_tools(self) -> list[types.Tool]:
        """The server's tools (every page), blocking until they arrive."""
        return self._submit(self._list_tools()).result(self.connect_timeout + self.call_timeout)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call a tool from any event loop; see the module docstring for the errors."""
        return await asyncio.wrap_future(self._submit(self._call(name, arguments)))

    def close(self) -> None:
        """Close the client (ending a stdio server) and the thread; idempotent."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            self._submit(self._disconnect()).result(15)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(15)
        if not self._loop.is_running():
            self._loop.close()

    def _submit(self, coro: Coroutine[Any, Any, _T]) -> Future[_T]:
        if self.closed and not self._loop.is_running():
            coro.close()
            raise InfraError(f"the MCP connection to {self.label} is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    # ---- inside the connection's loop ----------------------------------------------------
    async def _connected(self) -> Client:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is not None and self._owner is not None and not self._owner.done():
                return self._client
            await self._disconnect()
            ready: asyncio.Future[Client] = self._loop.create_future()
            self._stop = asyncio.Event()
            self._owner = self._loop.create_task(self._hold(ready, self._stop))
            try:
                async with asyncio.timeout(self.connect_timeout):
                    self._client = await ready
            except Exception as err:
                await self._disconnect()
                raise InfraError(
                    f"cannot connect to MCP server {self.label}: {type(err).__name__}: {err}"
                ) from err
            self.connects += 1
            return self._client

    async def _hold(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        """The one task that enters and leaves the SDK's client."""
        try:
            if isinstance(self.server, str):
                http = create_mcp_http_client(headers=self.headers)
                transport = streamable_http_client(self.server, http_client=http)
                async with http, Client(transport) as client:
                    ready.set_result(client)
                    await stop.wait()
            else:
                async with Client(self.server) as client:
                    ready.set_result(client)
                    await stop.wait()
        except BaseException as err:
            if not ready.done():
                ready.set_exception(err if isinstance(err, Exception) else RuntimeError(err))
            if not isinstance(err, Exception):
                raise

    async def _disconnect(self) -> None:
        owner, self._owner, self._client = self._owner, None, None
        if owner is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            async with asyncio.timeout(10):
                await asyncio.shield(owner)
        except BaseException:
            owner.cancel()

    async def _list_tools(self) -> list[types.Tool]:
        client = await self._connected()
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(1000):  # bounded: a server whose cursor never ends
            page = await self._guard(client.list_tools(cursor=cursor), "tools/list")
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise InfraError(f"MCP server {self.label} paginates tools/list without end")

    async def _call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        client = await self._connected()
        return await self._guard(client.call_tool(name, arguments), f"tools/call {name}")

    async def _guard(self, call: Coroutine[Any, Any, _T], what: str) -> _T:
        owner = self._owner
        assert owner is not None
        task = asyncio.ensure_future(call)
        try:
            async with asyncio.timeout(self.call_timeout):
                done, _ = await asyncio.wait({task, owner}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            task.cancel()
            await self._disconnect()
            raise InfraError(
                f"MCP server {self.label}: {what} got no answer in {self.call_timeout:g} s"
            ) from None
        if task not in done:  # the client's task ended first: the server went away
            task.cancel()
            await self._disconnect()
            raise InfraError(f"MCP server {self.label} went away during {what}")
        try:
            return task.result()
        except MCPError as err:
            if err.code in _TRANSPORT_CODES:
                await self._disconnect()
                raise InfraError(f"MCP server {self.label} failed during {what}: {err}") from err
            raise McpCallError(err.code, err.message) from err
        except Exception as err:
            await self._disconnect()
            raise InfraError(
                f"MCP server {self.label} failed during {what}: {type(err).__name__}: {err}"
            ) from err
