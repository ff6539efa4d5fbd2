"""A lean keep-alive HTTP/1.1 client for small JSON POSTs to one server (``/tokenize``).

The ``vllm:`` policy asks the server's ``/tokenize`` once per turn. General clients spend
more CPU on that small request than the request itself (aiohttp about 0.13 ms, the ``openai``
SDK's generic ``post`` more; this client about 0.03 ms on this machine), and on a small host
client CPU caps how many episodes run at once (``benchmarks/token_in_cpu.py``). It speaks
just what that needs: ``POST`` with a JSON body over ``http`` or ``https``, responses with
``Content-Length``, chunked or read-to-close bodies (interim 1xx responses skipped), one
pool of idle connections per event loop.

:meth:`JsonHttp.post` returns ``(status, body bytes)`` (:meth:`JsonHttp.exchange` also the
response headers, names lower-cased) and raises ``OSError`` (or
``asyncio.IncompleteReadError``, a subclass of ``EOFError``) when the connection fails,
:class:`ProtocolError` (an ``OSError``) when the response breaks HTTP/1.1 (a status that is
not three digits, a length or chunk size that is not a plain number, a header past
``MAX_HEADER``); a connection that failed is dropped, so a retry opens a fresh one. A
connection is kept for the next request only when the response ended where its length
said and nothing follows it: bytes after a response, or arriving while it is idle, are no
reply to any request this client sent, and would be read as the next one's. ``https`` uses the given
``ssl_context`` (the ``openai:`` policy passes the one its SDK client would use), else the
system's default. ``max_connections`` bounds the connections open at once per event loop,
as the SDK's connection limit does (the policies pass theirs): a request beyond it waits
for one to be free.
"""

from __future__ import annotations

import asyncio
import ssl
import string
import weakref
from dataclasses import dataclass
from urllib.parse import urlsplit

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
MAX_HEADER = 64 * 1024
_NO_BODY = frozenset({204, 304})


class ProtocolError(OSError):
    """The server's response breaks HTTP/1.1 as this client reads it."""


class JsonHttp:
    """Keep-alive JSON POSTs to the server at ``root`` (``scheme://host:port``)."""

    def __init__(
        self,
        root: str,
        headers: dict[str, str],
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int | None = None,
    ) -> None:
        if max_connections is not None and max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self.max_connections = max_connections
        parts = urlsplit(root)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the root must be http(s)://host[:port][/path]")  # not shown
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        host = parts.netloc.rpartition("@")[2]  # never the URL's credentials, if any
        self._head = f"Host: {host}\r\nContent-Type: application/json\r\n{extra}"
        self._ssl = ssl_context
        self._idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool]
        self._idle = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], _Pool] | None = None

    async def post(self, path: str, body: bytes, timeout: float) -> tuple[int, bytes]:
        status, _, data = await self.exchange(path, body, timeout)
        return status, data

    async def exchange(
        self, path: str, body: bytes, timeout: float | None, *, rooted: bool = False
    ) -> tuple[int, dict[str, str], bytes]:
        """``post``, with the response's headers (names lower-cased) too. ``timeout=None``
        sets no bound of its own (for a caller that bounds the call already: one timer
        fewer per request). ``rooted``: ``path`` is the server's own, not under the root's
        path (vLLM's ``/tokenize`` beside ``/v1``), on the same connections."""
        if timeout is not None:
            async with asyncio.timeout(timeout):
                return await self.exchange(path, body, None, rooted=rooted)
        target = path if rooted else self.prefix + path
        pool = self._loop_pool()
        if pool.slots is None:
            return await self._exchange(pool, target, body)
        async with pool.slots:  # a connection of the cap's, in use or idle, is this request's
            return await self._exchange(pool, target, body)

    async def _exchange(
        self, pool: _Pool, target: str, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        generation = pool.generation
        reader, writer = self._reuse(pool.idle) or await self._open()
        try:
            request = f"POST {target} HTTP/1.1\r\n{self._head}Content-Length: {len(body)}"
            writer.write(request.encode() + b"\r\n\r\n" + body)
            version, status, headers = await _final_head(reader)
            keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
            if status in _NO_BODY:  # never a body, whatever the headers say
                data = b""
            elif headers.get("transfer-encoding", "").lower() == "chunked":
                data = await _chunked(reader)
            elif "content-length" in headers:
                data = await reader.readexactly(_number(headers["content-length"], 10))
            else:  # no length: the body runs to the connection's close
                data, keep = await reader.read(), False
        except BaseException:
            writer.close()
            raise
        if keep and pool.generation == generation and not _waiting(reader):
            pool.idle.append((reader, writer))
        else:
            writer.close()
        return status, headers, data

    def _loop_pool(self) -> _Pool:
        """The running loop's connections (the last loop's are kept at hand)."""
        loop = asyncio.get_running_loop()
        last = self._last  # read once: another thread's loop may replace it at any moment
        if last is not None and last[0]() is loop:
            return last[1]
        pool = self._idle.get(loop)
        if pool is None:
            cap = self.max_connections
            pool = self._idle[loop] = _Pool([], None if cap is None else asyncio.Semaphore(cap))
        self._last = (weakref.ref(loop), pool)
        return pool

    @staticmethod
    def _reuse(pool: list[Connection]) -> Connection | None:
        """An idle connection of ``pool`` still open, or None (the closed ones are
        dropped)."""
        while pool:
            reader, writer = pool.pop()
            if not writer.is_closing() and not reader.at_eof() and not _waiting(reader):
                return reader, writer
            writer.close()
        return None

    async def _open(self) -> Connection:
        if self.tls and self._ssl is None:  # built once: it loads the trust store
            self._ssl = ssl.create_default_context()
        context = self._ssl if self.tls else None
        return await asyncio.open_connection(self.host, self.port, ssl=context)

    async def aclose(self) -> None:
        pool = self._idle.get(asyncio.get_running_loop())
        if pool is not None:  # its slots stay: requests in flight hold some of them
            pool.generation += 1  # and close their connections when done
            idle, pool.idle = pool.idle, []
            for _reader, writer in idle:
                writer.close()


@dataclass(slots=True)
class _Pool:
    """One event loop's connections: the idle ones, and with a cap the slots that bound the
    connections open at once (each request holds one from taking a connection, idle or
    new, until it is back in ``idle`` or closed, so idle and in use never pass the cap)."""

    idle: list[Connection]
    slots: asyncio.Semaphore | None
    generation: int = 0
    """Counts ``aclose`` calls: a connection taken before one is closed, never pooled."""


def _waiting(reader: asyncio.StreamReader) -> bool:
    """Whether bytes are buffered that no read has taken (the stream's own buffer: asyncio
    has no public way to peek at it)."""
    return bool(reader._buffer)  # type: ignore[attr-defined]


def _number(text: str | bytes, base: int) -> int:
    """A length or chunk size: plain digits of ``base`` only (``int`` would also take a
    sign, underscores, spaces and other scripts' digits)."""
    digits = text.strip() if isinstance(text, str) else text.strip().decode("latin-1")
    allowed = string.hexdigits if base == 16 else string.digits
    if not digits or digits.strip(allowed):
        raise ProtocolError(f"not a plain number: {digits[:40]!r}")
    try:
        return int(digits, base)
    except ValueError:  # past int's limit on decimal digits
        raise ProtocolError(f"a number of {len(digits)} digits") from None


async def _final_head(reader: asyncio.StreamReader) -> tuple[str, int, dict[str, str]]:
    """The final response's head: interim (1xx) responses before it are skipped, as httpx
    skips them (answering with one would leave the final response on the connection, to be
    read as the next request's); ``101`` (an upgrade this client never asks for) is
    ``ProtocolError``."""
    while True:
        version, status, headers = _head(await _line(reader, b"\r\n\r\n"))
        if status == 101:
            raise ProtocolError("the server switched protocols")
        if status >= 200:
            return version, status, headers


def _head(head: bytes) -> tuple[str, int, dict[str, str]]:
    """The status line's version and code, and the headers (names lower-cased)."""
    if len(head) > MAX_HEADER:
        raise ProtocolError("response header too large")
    lines = head.decode("latin-1").split("\r\n")
    version, code = ([*lines[0].split(" ", 2), ""])[:2]
    if len(code) != 3 or code.strip("0123456789"):
        raise ProtocolError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return version, int(code), headers


async def _line(reader: asyncio.StreamReader, end: bytes) -> bytes:
    """Bytes up to ``end``; ``ProtocolError`` past the stream's limit (asyncio raises
    ``LimitOverrunError``, which is no ``OSError``)."""
    try:
        return await reader.readuntil(end)
    except asyncio.LimitOverrunError:
        raise ProtocolError("response line too long") from None


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = _number((await _line(reader, b"\r\n")).split(b";")[0], 16)
        if size == 0:  # then the trailer: header lines up to an empty one
            while len(await _line(reader, b"\r\n")) > 2:
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
