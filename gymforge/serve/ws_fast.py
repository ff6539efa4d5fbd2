"""The WebSocket transport of the session route (``/ws``), without ASGI between messages.

uvicorn's WebSocket protocol hands every message to the application as an ASGI event
through an ``asyncio.Queue``, pauses the socket's reading after each one and resumes it when
the application asks for the next (an event-loop unregister and register per message), and
each reply crosses Starlette's ``WebSocket`` wrapper and uvicorn's ASGI ``send``. On this
route that is most of a step's CPU.

``session_protocol(hub)`` is uvicorn's own sans-I/O protocol class (``websockets``' parser
and handshake: masking, fragmentation, UTF-8 of text frames, control frames, close codes,
the frame-size cap; keep-alive pings; the closing handshake: RFC 6455 as uvicorn serves
it) with one difference on the session route, once uvicorn has accepted the handshake:
``Hub.handle`` runs directly on the connection (a ``FastSocket``). Messages go to an
``Inbox`` that wakes the session without a queue, and reading pauses only while
``INBOX_MESSAGES`` messages or ``max_message_bytes`` wait unread (a client that pipelines);
a reply is one frame written straight to the transport, after waiting while the
transport's buffer is above its high-water mark (a client that stops reading fills it, the
session stops reading in turn, and the reaper's ``send_timeout`` ends it). Admission (Origin,
token, capacity), the messages, their replies and close codes are the hub's and the
session's, unchanged. Every other path, and every handshake uvicorn refuses, takes
uvicorn's normal ASGI route.
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, cast

from starlette.requests import HTTPConnection
from uvicorn.config import Config
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.http11 import Request
from websockets.protocol import State
from websockets.streams import StreamReader

from gymforge.serve.frames_in import whole_data_frames

if TYPE_CHECKING:
    from gymforge.serve.hub import Hub

AT_FRAME = StreamReader.at_eof.__code__
"""What ``websockets``' parser waits in between frames (inside a frame it waits in
``read_exact``, holding what it read of it)."""

INBOX_MESSAGES = 8
"""Unread messages at which a connection stops reading its socket until the session
catches up (a request-reply client has at most one)."""

_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")


def text_frame(payload: bytes) -> bytes:
    """One unmasked, final text frame (a server's frame) carrying ``payload``."""
    n = len(payload)
    if n < 126:
        return _SHORT.pack(0x81, n) + payload
    if n < 65536:
        return _MEDIUM.pack(0x81, 126, n) + payload
    return _LONG.pack(0x81, 127, n) + payload


class Inbox:
    """A connection's received events (ASGI-shaped), read by one session task.

    ``put_nowait`` is what uvicorn's protocol calls for every event (a message, a
    disconnect), so it stands in for its queue; ``put_message`` is the same for a message
    whose size the caller knows. Each event is kept with its size."""

    __slots__ = ("_budget", "_bytes", "_items", "_proto", "_waiter")

    def __init__(self, proto: SessionProtocol, budget: int) -> None:
        self._items: deque[tuple[MutableMapping[str, Any], int]] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._bytes = 0
        self._proto = proto
        self._budget = budget

    def put_nowait(self, event: MutableMapping[str, Any]) -> None:
        self.put_message(event, _size(event))

    def put_message(self, event: MutableMapping[str, Any], size: int) -> None:
        self._items.append((event, size))
        self._bytes += size
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if len(self._items) >= INBOX_MESSAGES or self._bytes > self._budget:
            self._proto.pause()

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    async def get(self) -> MutableMapping[str, Any]:
        while not self._items:
            self._waiter = self._proto.loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        event, size = self._items.popleft()
        self._bytes -= size
        if (
            self._proto.read_paused
            and len(self._items) < INBOX_MESSAGES // 2
            and self._bytes <= self._budget
        ):
            self._proto.resume()
        return event


def _size(event: MutableMapping[str, Any]) -> int:
    """An event's size against the budget: a message's bytes (a text's UTF-8), else 0."""
    text = event.get("text")
    if text:
        return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    data = event.get("bytes")
    return len(data) if data is not None else 0


class SessionProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, with the session route served directly (see the
    module docstring). Made per server by ``session_protocol``."""

    hub: Hub
    route: str = "/ws"
    _proxy: ProxyHeadersMiddleware | None = None

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.fast = False
        self.inbox: Inbox | None = None

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None and scope["path"] == self.root_path + self.route:
            self.fast = True
            self.inbox = Inbox(self, self.hub.config.max_message_bytes)
            self.queue = self.inbox  # type: ignore[assignment]  # the connect event is implied

    def data_received(self, data: bytes) -> None:
        if not (self.fast and self._take_frames(data)):
            super().data_received(data)

    def _take_frames(self, data: bytes) -> bool:
        """Deliver ``data`` here when it is whole data frames only, as ``websockets`` would
        (``frames.whole_data_frames``), with its parser waiting for a frame and nothing
        buffered; else False, and ``data`` takes ``websockets``' parser."""
        conn = self.conn
        if (
            conn.state is not State.OPEN
            or conn.current_size is not None
            or conn.reader.buffer
            or conn.extensions
            or conn.debug
        ):
            return False
        waiting = conn.parser  # the innermost generator the parser waits in
        while (inner := getattr(waiting, "gi_yieldfrom", None)) is not None:
            waiting = inner
        if getattr(waiting, "gi_code", None) is not AT_FRAME:
            return False
        limit = conn.max_message_size
        if conn.max_fragment_size is not None:
            limit = conn.max_fragment_size if limit is None else min(limit, conn.max_fragment_size)
        frames = whole_data_frames(data, limit)
        if frames is None:
            return False
        for text, payload in frames:
            self.curr_msg_data_type = "text" if text else "bytes"
            self._deliver(payload)
        return True

    def send_receive_event_to_app(self) -> None:
        if not self.fast:
            super().send_receive_event_to_app()
            return
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        self._deliver(data)

    def _deliver(self, data: bytes) -> None:
        """A whole message, to the session's inbox (``curr_msg_data_type`` says its kind)."""
        if self.close_sent:
            return  # past our close: discard, keep reading until the peer's close
        if self.curr_msg_data_type == "text":
            try:
                text = data.decode()
            except UnicodeDecodeError:
                self.conn.send_close(1007)
                self.handle_parser_exception()
                return
            event: dict[str, Any] = {"type": "websocket.receive", "text": text}
            self.inbox.put_message(event, len(data))  # type: ignore[union-attr]  # its bytes
        else:
            event = {"type": "websocket.receive", "bytes": data}
            self.inbox.put_message(event, len(data))  # type: ignore[union-attr]

    def pause(self) -> None:
        if not self.read_paused and not self.transport.is_closing():
            self.read_paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        self.read_paused = False
        self.transport.resume_reading()

    def _proxy_headers(self) -> ProxyHeadersMiddleware | None:
        """uvicorn's proxy-header rewrite of the client address (made once per class)."""
        cls = type(self)
        if cls._proxy is None and self.config.proxy_headers:
            cls._proxy = ProxyHeadersMiddleware(_noop_app, self.config.forwarded_allow_ips)
        return cls._proxy

    async def run_asgi(self) -> None:
        if not self.fast:
            await super().run_asgi()
            return
        try:
            proxy = self._proxy_headers()
            if proxy is not None:  # X-Forwarded-For from a trusted proxy, as for ASGI
                await proxy(self.scope, _never_receive, _never_send)
            await self.hub.handle(FastSocket(self))
        except ClientDisconnected:
            pass
        except BaseException:
            self.logger.exception("Exception in the WebSocket session\n")
            self.send_500_response()
        else:
            if not self.handshake_complete:
                self.send_500_response()
        if self.close_timer is None:
            self.transport.close()


async def _noop_app(scope: Any, receive: Any, send: Any) -> None:
    return None


async def _never_receive() -> Any:
    raise RuntimeError("not an ASGI application")


async def _never_send(message: Any) -> None:
    raise RuntimeError("not an ASGI application")


class FastSocket(HTTPConnection):
    """What ``Hub.handle`` and ``Session`` use of Starlette's ``WebSocket`` (``accept``,
    ``receive``, ``send_text``, ``close``, ``headers``, ``client``), on a
    ``SessionProtocol`` connection."""

    def __init__(self, proto: SessionProtocol) -> None:
        super().__init__(cast("dict[str, Any]", proto.scope))
        assert proto.inbox is not None
        self._proto = proto
        self.receive = proto.inbox.get  # type: ignore[method-assign]  # no coroutine between

    async def accept(self) -> None:
        await self._proto.send({"type": "websocket.accept"})

    async def receive(self) -> MutableMapping[str, Any]:
        """The next event (``__init__`` sets the inbox's own ``get`` in its place)."""
        raise NotImplementedError

    async def send_text(self, data: str) -> None:
        await self.send_utf8(data.encode())

    async def send_utf8(self, data: bytes) -> None:
        """``send_text`` of the text whose UTF-8 is ``data``."""
        proto = self._proto
        if not proto.writable.is_set():
            await proto.writable.wait()  # the transport's buffer is over its high-water mark
        if proto.close_sent or proto.disconnected or proto.transport.is_closing():
            raise ClientDisconnected()
        proto.transport.write(text_frame(data))

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        await self._proto.send({"type": "websocket.close", "code": code, "reason": reason or ""})


def session_protocol(hub: Hub, route: str = "/ws") -> type[SessionProtocol]:
    """The WebSocket protocol class serving ``hub``'s sessions on ``route``, for uvicorn's
    ``ws=`` (one class per server: the hub is a class attribute)."""
    return type("SessionProtocol", (SessionProtocol,), {"hub": hub, "route": route})
