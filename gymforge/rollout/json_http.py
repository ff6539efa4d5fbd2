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
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], list[Connection]] | None = None

    async def post(self, path: str, body: bytes, timeout: float) -> tuple[int, bytes]:
        status, _, data = await self.exchange(path, body, timeout)
        return status, data

    async def exchange(
        self, path: str, body: bytes, timeout: float | None
    ) -> tuple[int, dict[str, str], bytes]:
        """``post``, with the response's headers (names lower-cased) too. ``timeout=None``
        sets no bound of its own (for a caller that bounds the call already: one timer
        fewer per request)."""
        if timeout is not None:
            async with asyncio.timeout(timeout):
                return await self.exchange(path, body, None)
        reader, writer = self._reuse() or await self._open()
        try:
            request = (
                f"POST {self.prefix}{path} HTTP/1.1\r\n{self._head}Content-Length: {len(body)}"
            )
            writer.write(request.encode() + b"\r\n\r\n" + body)
            version, code, headers = _head(await reader.readuntil(b"\r\n\r\n"))
            if headers.get("transfer-encoding", "").lower() == "chunked":
                data = await _chunked(reader)
            else:
                data = await reader.readexactly(int(headers.get("content-length", "0")))
            status = int(code)
        except BaseException:
            writer.close()
            raise
        if headers.get("connection", "").lower() != "close" and version == "HTTP/1.1":
            self._pool().append((reader, writer))
        else:
            writer.close()
        return status, headers, data

    def _pool(self) -> list[Connection]:
        """The running loop's idle connections (the last loop's list is kept at hand)."""
        loop = asyncio.get_running_loop()
        if self._last is not None and self._last[0]() is loop:
            return self._last[1]
        pool = self._idle.get(loop)
        if pool is None:
            pool = self._idle[loop] = []
        self._last = (weakref.ref(loop), pool)
        return pool

    def _reuse(self) -> Connection | None:
        """An idle connection still open, or None (the closed ones are dropped)."""
        pool = self._pool()
        while pool:
            reader, writer = pool.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.close()
        return None

    async def _open(self) -> Connection:
        if self.tls and self._ssl is None:  # built once: it loads the trust store
            self._ssl = ssl.create_default_context()
        context = self._ssl if self.tls else None
        return await asyncio.open_connection(self.host, self.port, ssl=context)

    async def aclose(self) -> None:
        self._last = None
        for _reader, writer in self._idle.pop(asyncio.get_running_loop(), []):
            writer.close()


def _head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """The status line's version and code, and the headers (names lower-cased)."""
    if len(head) > MAX_HEADER:
        raise OSError("response header too large")
    lines = head.decode("latin-1").split("\r\n")
    version, code = lines[0].split(" ", 2)[:2]
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return version, code, headers


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # the (empty) trailer
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
