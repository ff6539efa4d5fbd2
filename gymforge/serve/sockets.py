"""What a served session needs of its connection: who is connecting (``Peer``) and the
WebSocket it talks over (``SessionSocket``)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Protocol

from starlette.datastructures import Address, Headers


class Peer(Protocol):
    """Who is connecting: the request's headers and remote address."""

    @property
    def headers(self) -> Headers: ...

    @property
    def client(self) -> Address | None: ...


class SessionSocket(Peer, Protocol):
    """What a session uses of its connection: Starlette's ``WebSocket`` (under any ASGI
    server), or ``gymforge.serve.ws_fast.FastSocket`` (``gymforge serve``'s own route),
    which also takes a reply as its text's UTF-8 (``send_utf8``, when a socket has it)."""

    async def accept(self) -> None: ...

    async def receive(self) -> MutableMapping[str, Any]: ...

    async def send_text(self, data: str) -> None: ...

    async def close(self, code: int = 1000, reason: str | None = None) -> None: ...
