"""Server settings and the rules that guard them (auth beyond loopback, sane limits)."""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Any

from gymforge.core.errors import UserError
from gymforge.settings import TOKEN_ENV as TOKEN_ENV  # re-exported: the name serve has used


@dataclass(frozen=True)
class ServeConfig:
    """Limits and switches of one server.

    - ``max_sessions``: concurrent WebSocket sessions; one more gets a ``capacity`` error.
    - ``max_sessions_per_client``: concurrent sessions of one client, a client being one
      (remote address, bearer token presented) pair, the token normalised (scheme case and
      spaces ignored; without a server token the header does not count: ``credential_of``);
      one more gets a ``capacity`` error, so no client holds every slot. Default (None): a
      quarter of ``max_sessions``, at least 1 (``client_cap``). Behind a proxy every client
      shares the proxy's address. Over MCP each session also holds at most
      ``TRANSPORTS_PER_SESSION`` transport sessions (``gymforge.serve.mcp.transports``).
    - ``idle_timeout``: seconds a session may wait for its next message before the reaper
      closes it (code 4408) and releases its environment. Always on.
    - ``max_message_bytes``: a larger client message gets a fatal ``too_large`` error and
      the session closes (1009) without processing it; frames beyond 4x this are cut by
      the transport (close 1009, no error frame).
    - ``request_timeout``: seconds one environment call may take; past it the session ends.
    - ``qa_hooks``: serve what reveals hidden truth: the oracle, oracle plans, red-team
      cases and task truth digests. Off by default: QA against a served environment
      (``gymforge qa ws://...``) and the scripted ``oracle`` baseline need a server started
      with ``--qa-hooks``, which no server the evaluated policy can reach should be.
    - ``fault_injection``: let a session inject faults into its *own* tools (QA error_paths).
    - ``allowed_origins``: browser Origins allowed to open sessions (none by default).
    """

    token: str | None = None
    max_sessions: int = 256
    max_sessions_per_client: int | None = None
    idle_timeout: float = 300.0
    max_message_bytes: int = 8 * 2**20
    request_timeout: float = 300.0
    send_timeout: float = 30.0
    qa_hooks: bool = False
    fault_injection: bool = True
    allowed_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise UserError("--max-sessions must be >= 1")
        if self.max_sessions_per_client is not None and self.max_sessions_per_client < 1:
            raise UserError("--max-sessions-per-client must be >= 1")
        if not 0 < self.idle_timeout <= 7 * 86400:
            raise UserError("--idle-timeout must be > 0 seconds (the reaper cannot be disabled)")
        if self.max_message_bytes < 1024:
            raise UserError("--max-message-bytes must be >= 1024")
        if self.request_timeout <= 0 or self.send_timeout <= 0:
            raise UserError("timeouts must be > 0")
        if self.token is not None and len(self.token) < 8:
            raise UserError("the token must be at least 8 characters")

    @property
    def client_cap(self) -> int:
        """Concurrent sessions one client may hold (``max_sessions_per_client``)."""
        if self.max_sessions_per_client is not None:
            return min(self.max_sessions_per_client, self.max_sessions)
        return max(1, self.max_sessions // 4)

    @property
    def transport_max_bytes(self) -> int:
        """The hard frame cap handed to the WebSocket transport."""
        return 4 * self.max_message_bytes

    def limits(self) -> dict[str, Any]:
        return {
            "max_sessions": self.max_sessions,
            "max_sessions_per_client": self.client_cap,
            "idle_timeout_s": self.idle_timeout,
            "max_message_bytes": self.max_message_bytes,
            "request_timeout_s": self.request_timeout,
        }


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses; every other name counts as beyond."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """Refuse to bind beyond loopback without a token (UserError)."""
    if token is None and not is_loopback(host):
        raise UserError(
            f"refusing to bind {host}: beyond loopback a bearer token is required "
            f"(--token or ${TOKEN_ENV})"
        )


def presented_token(header: str | None) -> str | None:
    """The bearer token an ``Authorization`` header presents, normalised: the scheme matched
    case-insensitively, surrounding whitespace stripped and inner runs collapsed to one
    space (``"  bEaReR \t T "`` presents ``"T"``). None when it presents no bearer token."""
    scheme, _, given = " ".join((header or "").split()).partition(" ")
    return given if scheme.lower() == "bearer" and given else None


def auth_problem(header: str | None, token: str | None) -> str | None:
    """Why an ``Authorization`` header fails (None when it passes or no token is set)."""
    if token is None:
        return None
    given = presented_token(header)
    if given is None:
        return "missing bearer token"
    if not hmac.compare_digest(given.encode(), token.encode()):
        return "wrong bearer token"
    return None


def credential_of(header: str | None, token: str | None) -> str:
    """The credential a client is known by, for caps: the normalised token it presented
    when the server has one, else nothing (without a token the header proves nothing, so
    inventing headers must not make new clients). Only call it for an admitted request."""
    return (presented_token(header) or "") if token is not None else ""
