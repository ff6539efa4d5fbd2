"""A minimal RFC 6455 client for the load client (``ws_load.py``): one connection per
``RawSession``, on a bare asyncio protocol.

It sends what a browser or the ``websockets`` package would (an HTTP/1.1 upgrade with a
random key, checked against the server's ``Sec-WebSocket-Accept``; masked frames), reads
unmasked server frames (any length, fragmented messages reassembled), answers pings and
stops at a close frame. A frame's masked bytes are computed once per distinct text (the
scripts repeat the same frames), which is what makes it cheap: a round trip costs a
``transport.write`` and the parsing of one reply header. It is a benchmark tool, not a
general client: no extensions, no subprotocols, no TLS.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import struct
from collections import deque
from typing import cast
from urllib.parse import urlsplit

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_MASK = os.urandom(4)
_FRAMES: dict[str, bytes] = {}


def masked_frame(opcode: int, payload: bytes, mask: bytes = _MASK) -> bytes:
    """A final client frame (masked with ``mask``) carrying ``payload``."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
    body = (int.from_bytes(payload, "big") ^ key).to_bytes(n, "big") if n else b""
    return head + mask + body


def text_frame(text: str) -> bytes:
    """``text`` as a masked text frame, memoised (scripts resend the same frames)."""
    frame = _FRAMES.get(text)
    if frame is None:
        frame = _FRAMES[text] = masked_frame(0x1, text.encode())
    return frame


class RawSession(asyncio.Protocol):
    """One WebSocket connection; ``await RawSession.connect(url, headers)``."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.handshake: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.messages: deque[bytes] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.parts: list[bytes] = []
        self.closed: str | None = None

    @classmethod
    async def connect(cls, url: str, headers: tuple[tuple[str, str], ...] = ()) -> RawSession:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        loop = asyncio.get_running_loop()
        _, session = await loop.create_connection(cls, host, port)
        key = base64.b64encode(os.urandom(16))
        lines = [
            f"GET {parts.path or '/'}{'?' + parts.query if parts.query else ''} HTTP/1.1",
            f"Host: {host}:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13",
            *(f"{k}: {v}" for k, v in headers),
        ]
        assert session.transport is not None
        session.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = await session.handshake
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            session.transport.close()
            raise ConnectionError(f"handshake refused: {head[:300]!r}")
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        fields = dict(
            (k.strip().lower(), v.strip())
            for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
        )
        if fields.get(b"sec-websocket-accept") != accept:
            session.transport.close()
            raise ConnectionError("wrong Sec-WebSocket-Accept")
        return session

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.handshake.done():
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            self.handshake.set_result(bytes(self.buf[:end]))
            del self.buf[: end + 4]
        self._frames()

    def _frames(self) -> None:
        buf = self.buf
        while len(buf) >= 2:
            b0, b1 = buf[0], buf[1]
            n, off = b1 & 0x7F, 2
            if n == 126:
                if len(buf) < 4:
                    return
                n, off = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n, off = int.from_bytes(buf[2:10], "big"), 10
            if b1 & 0x80:
                self._fail("the server masked a frame")
                return
            if len(buf) < off + n:
                return
            payload = bytes(buf[off : off + n])
            del buf[: off + n]
            opcode = b0 & 0x0F
            if opcode == 0x9:  # ping: pong with its payload
                assert self.transport is not None
                self.transport.write(masked_frame(0xA, payload))
            elif opcode == 0x8:
                self._fail("closed by the server " + payload[:2].hex())
                return
            elif opcode in (0x0, 0x1, 0x2):
                self.parts.append(payload)
                if b0 & 0x80:
                    whole = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
                    self.parts = []
                    self.messages.append(whole)
                    self._wake()

    def _fail(self, why: str) -> None:
        self.closed = self.closed or why
        if not self.handshake.done():
            self.handshake.set_exception(ConnectionError(why))
        if self.transport is not None:
            self.transport.close()
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(f"connection lost: {exc!r}")

    async def send(self, text: str) -> None:
        if self.closed is not None:
            raise ConnectionError(self.closed)
        assert self.transport is not None
        self.transport.write(text_frame(text))

    async def recv(self) -> bytes:
        while not self.messages:
            if self.closed is not None:
                raise ConnectionError(self.closed)
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
            self.waiter = None
        return self.messages.popleft()

    async def close(self) -> None:
        if self.transport is not None and self.closed is None:
            self.transport.write(masked_frame(0x8, struct.pack("!H", 1000)))
            self.closed = "closed by the client"
            self.transport.close()
