"""The server's sessions: admission (Origin, bearer token, capacity) and the reaper.

Capacity is counted twice: ``max_sessions`` over the server, and ``client_cap``
(``--max-sessions-per-client``) per client, a client being the pair (remote address,
bearer token presented, normalised: ``gymforge.serve.config.credential_of``), so one
client cannot hold every slot.

See ``gymforge.serve.session`` for what a session does once admitted and for the reaper's
rules; ``Hub`` owns the table of open sessions that both the WebSocket route and
``/metrics`` read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections import Counter
from typing import Protocol

from gymforge.serve import protocol as p
from gymforge.serve.config import ServeConfig, auth_problem, credential_of
from gymforge.serve.meta import EnvCatalog
from gymforge.serve.metrics import Metrics
from gymforge.serve.record import Recorder
from gymforge.serve.session import Session, refuse
from gymforge.serve.sockets import Peer, SessionSocket


def client_key(conn: Peer, token: str | None) -> tuple[str, str]:
    """Who holds a session, for the per-client caps: the remote address and a digest of the
    credential presented, normalised (``credential_of``: however the header spells the
    scheme and spaces, one token is one client; the token itself is never kept)."""
    host = conn.client.host if conn.client is not None else ""
    credential = credential_of(conn.headers.get("authorization"), token).encode()
    return host, hashlib.sha256(credential).hexdigest()[:16]


class Reapable(Protocol):
    """What the hub keeps of a session: an id, the reaper's verdict, and its release."""

    id: str

    def check(self, now: float) -> None: ...

    async def release(self) -> None: ...


class Hub:
    """The server's sessions, shared by the HTTP routes (metrics) and the WebSocket route."""

    def __init__(
        self,
        catalog: EnvCatalog,
        config: ServeConfig,
        metrics: Metrics,
        recorder: Recorder | None = None,
    ) -> None:
        self.catalog = catalog
        self.config = config
        self.metrics = metrics
        self.recorder = recorder or Recorder(None)
        self.stopping = False
        self.sessions: dict[str, Reapable] = {}
        self.per_client: Counter[tuple[str, str]] = Counter()
        self._reaper: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the reaper (at application startup)."""
        self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def stop(self) -> None:
        """Stop the reaper and release every session (their open episodes are recorded as
        ``server_shutdown``); the caller then finishes the recorder."""
        self.stopping = True
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        for session in list(self.sessions.values()):
            await session.release()

    async def _reap_forever(self) -> None:
        cfg = self.config
        period = min(max(min(cfg.idle_timeout, cfg.send_timeout) / 4, 0.05), 1.0)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                session.check(now)

    async def handle(self, ws: SessionSocket) -> None:
        await ws.accept()
        cfg, m = self.config, self.metrics
        origin = ws.headers.get("origin")
        if origin is not None and origin not in cfg.allowed_origins:
            m.auth_failures += 1
            text = f"Origin {origin[:100]!r} is not allowed"
            await refuse(ws, "unauthorized", text, p.CLOSE_POLICY_VIOLATION)
            return
        problem = auth_problem(ws.headers.get("authorization"), cfg.token)
        if problem is not None:
            m.auth_failures += 1
            await refuse(ws, "unauthorized", problem, p.CLOSE_POLICY_VIOLATION)
            return
        client = client_key(ws, cfg.token)
        full = self.capacity_problem(client)
        if full is not None:
            await refuse(ws, "capacity", full, p.CLOSE_TRY_AGAIN)
            return
        session = Session(ws, self)
        self.enter(session, client)
        try:
            await session.run()
        except asyncio.CancelledError:
            if not session._absorb_cancel():  # not the reaper's doing: shutdown
                raise
        finally:
            await self.leave(session, client)

    def capacity_problem(self, client: tuple[str, str]) -> str | None:
        """Why one more session of ``client`` cannot open (counted as refused), else None.
        Call ``enter`` with no await in between, so the check and the reservation agree."""
        cfg, m = self.config, self.metrics
        full = None
        if len(self.sessions) >= cfg.max_sessions:
            full = f"server at capacity ({cfg.max_sessions} sessions); retry later"
        elif self.per_client[client] >= cfg.client_cap:
            full = (
                f"this client already holds {cfg.client_cap} sessions, the limit per client "
                "(--max-sessions-per-client); close one or retry later"
            )
        if full is not None:
            m.sessions_refused += 1
            m.errors["capacity"] += 1
        return full

    def enter(self, session: Reapable, client: tuple[str, str]) -> None:
        """Hold a slot for an admitted session (after ``capacity_problem`` said yes)."""
        self.sessions[session.id] = session
        self.per_client[client] += 1
        self.metrics.sessions_total += 1
        self.metrics.sessions_open = len(self.sessions)

    async def leave(self, session: Reapable, client: tuple[str, str]) -> None:
        """Free the slot and release the session's environment (idempotent)."""
        if self.sessions.pop(session.id, None) is not None:
            self.per_client[client] -= 1
            if self.per_client[client] <= 0:
                del self.per_client[client]
        self.metrics.sessions_open = len(self.sessions)
        await session.release()
