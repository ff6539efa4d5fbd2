"""A lean keep-alive HTTP/1.1 client for small JSON POSTs to one server (``/tokenize``).

The ``vllm:`` policy asks the server's ``/tokenize`` once per turn. General clients spend
more CPU on that small request than the request itself (aiohttp about 0.13 ms, the ``openai``
SDK's generic ``post`` more; this client about 0.03 ms on this machine), and on a small host
client CPU caps how many episodes run at once (``benchmarks/token_in_cpu.py``). It speaks
just what that needs: ``POST`` with a JSON body over ``http`` or ``https``, responses with
``Content-Length`` or chunked bodies, one pool of idle connections per event loop.

:meth:`JsonHttp.post` returns ``(status, body bytes)`` (:meth:`JsonHttp.exchange` also the
response headers, names lower-cased) and raises ``OSError`` (or
``asyncio.IncompleteReadError``, a subclass of ``EOFError``) when the connection fails; a
connection that failed is dropped, so a retry opens a fresh one. ``https`` uses the given
``ssl_context`` (the ``openai:`` policy passes the one its SDK client would use), else the
system's default.
"""

from __future__ import annotations

import asyncio
import ssl
import weakref
from urllib.parse import urlsplit

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
MAX_HEADER = 64 * 1024


class JsonHttp:
    """Keep-alive JSON POSTs to the server at ``root`` (``scheme://host:port``)."""

    def __init__(
        self, root: str, headers: dict[str, str], ssl_context: ssl.SSLContext | None = None
    ) -> None:
        parts = urlsplit(root)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self._head = f"Host: {parts.netloc}\r\nContent-Type: application/json\r\n{extra}"
        self._ssl = ssl_context
        self._idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Connection]]
        self._idle = weakref.WeakKeyDictionary()

    async def post(self, path: str, body: bytes, timeout: float) -> tuple[int, bytes]:
        status, _, data = await self.exchange(path, body, timeout)
        return status, data

    async def exchange(
        self, path: str, body: bytes, timeout: float | None
    ) -> tuple[int, dict[str, str], bytes]:
        """``post``, with the response's headers (names lower-cased) too. ``timeout=None``
        sets no bound of its own (for a caller that bounds the call already: one timer
        fewer per request)."""
        if timeout is None:
            status, headers, data, conn, keep = await self._attempt(path, body)
        else:
            async with asyncio.timeout(timeout):
                status, headers, data, conn, keep = await self._attempt(path, body)
        if keep:
            self._pool().append(conn)
        else:
            conn[1].close()
        return status, headers, data

    async def _attempt(
        self, path: str, body: bytes
    ) -> tuple[int, dict[str, str], bytes, Connection, bool]:
        conn = await self._connection()
        try:
            status, headers, data, keep = await self._exchange(conn, path, body)
        except BaseException:
            conn[1].close()
            raise
        return status, headers, data, conn, keep

    def _pool(self) -> list[Connection]:
        loop = asyncio.get_running_loop()
        pool = self._idle.get(loop)
        if pool is None:
            pool = self._idle[loop] = []
        return pool

    async def _connection(self) -> Connection:
        pool = self._pool()
        while pool:
            reader, writer = pool.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.close()
        if self.tls and self._ssl is None:  # built once: it loads the trust store
            self._ssl = ssl.create_default_context()
        context = self._ssl if self.tls else None
        return await asyncio.open_connection(self.host, self.port, ssl=context)

    async def _exchange(
        self, conn: Connection, path: str, body: bytes
    ) -> tuple[int, dict[str, str], bytes, bool]:
        reader, writer = conn
        request = f"POST {self.prefix}{path} HTTP/1.1\r\n{self._head}Content-Length: {len(body)}"
        writer.write(request.encode() + b"\r\n\r\n" + body)
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEADER:
            raise OSError("response header too large")
        lines = head.decode("latin-1").split("\r\n")
        version, status_text = lines[0].split(" ", 2)[:2]
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            data = await _chunked(reader)
        else:
            data = await reader.readexactly(int(headers.get("content-length", "0")))
        keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
        return int(status_text), headers, data, keep

    async def aclose(self) -> None:
        for _reader, writer in self._idle.pop(asyncio.get_running_loop(), []):
            writer.close()


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # the (empty) trailer
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
