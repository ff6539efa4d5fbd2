"""Client-side errors and the synchronous HTTP side of a served environment.

A ref is ``ws://HOST:PORT`` (or ``wss://``, optionally with a path prefix, with or without
the trailing ``/ws``). The token is ``token=`` when given, else ``$GYMFORGE_TOKEN``; it is
never taken from the URL, so it cannot leak into run summaries or logs.
"""

from __future__ import annotations

import socket
import threading
from typing import Any
from urllib.parse import urlsplit

import httpx

from gymforge.core.errors import InfraError, UnknownTaskError, UserError
from gymforge.serve.config import TOKEN_ENV
from gymforge.settings import environ_token


class AuthError(UserError):
    """The server refused the credentials (HTTP 401/403, WebSocket close 1008)."""


class RemoteError(InfraError):
    """The server or the connection failed, or refused an operation."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class RemoteEnvError(RemoteError):
    """The environment raised inside the server; the session survives."""


class CapacityError(RemoteError):
    """The server is at its session limit (close 1013); retry later."""


class SessionLost(RemoteError):
    """The session ended under an episode (reaped, server restart, network); reset again."""


def split_ref(ref: str) -> tuple[str, str]:
    """``(ws_url, http_base)`` of a ``ws://``/``wss://`` ref; UserError for anything else."""
    parts = urlsplit(ref)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        shown = "" if "@" in ref else f": {ref!r}"  # it may hold a password
        raise UserError(f"not a served environment ref (ws://HOST:PORT){shown}")
    if parts.username or parts.password:
        raise UserError(f"put the token in --token or ${TOKEN_ENV}, not in the URL")
    prefix = parts.path.rstrip("/")
    prefix = prefix.removesuffix("/ws")
    http = "https" if parts.scheme == "wss" else "http"
    return f"{parts.scheme}://{parts.netloc}{prefix}/ws", f"{http}://{parts.netloc}{prefix}"


def resolve_token(token: str | None) -> str | None:
    """``token``, else ``$GYMFORGE_TOKEN`` (read by ``gymforge.settings``), else None."""
    return token if token is not None else environ_token()


class HttpService:
    """Keep-alive HTTP to one server, shared by every instance one factory makes."""

    def __init__(self, ref: str, token: str | None = None, timeout: float = 60.0) -> None:
        self.ref = ref
        self.ws_url, self.base = split_ref(ref)
        self.token = resolve_token(token)
        self.timeout = timeout
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                # TCP_NODELAY: a POST is two writes (headers, body); with Nagle on, each
                # waits for the server's delayed ACK (~40 ms)
                transport = httpx.HTTPTransport(
                    socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
                )
                self._client = httpx.Client(
                    base_url=self.base,
                    headers=self.headers,
                    timeout=self.timeout,
                    transport=transport,
                )
            return self._client

    def get(self, path: str) -> Any:
        return self._call("GET", path, None)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("POST", path, body)

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        try:
            resp = self._http().request(method, path, json=body)
        except httpx.HTTPError as err:
            raise RemoteError(f"{self.base}{path}: {type(err).__name__}: {err}") from err
        if resp.status_code == 200:
            return resp.json()
        try:
            detail = resp.json()["error"]
            code, message = str(detail["code"]), str(detail["message"])
        except (ValueError, KeyError, TypeError):
            code, message = "", resp.text[:300]
        where = f"{self.base}{path}"
        if resp.status_code in (401, 403) and code == "unauthorized":
            hint = "" if self.token else f" (pass --token or set ${TOKEN_ENV})"
            raise AuthError(f"{where}: {resp.status_code} {message}{hint}")
        if code == "unknown_task":
            raise UnknownTaskError(message)
        if resp.status_code == 400:
            raise ValueError(message)
        raise RemoteError(f"{where}: HTTP {resp.status_code} {code}: {message}", code)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
