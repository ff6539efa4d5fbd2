"""The proxy's settings (:class:`ProxyConfig`), re-exported by
:mod:`gymforge.serve.proxy.server`, whose module docstring says what each limit does."""

from __future__ import annotations

from dataclasses import dataclass

from gymforge.core.errors import UserError
from gymforge.serve.config import check_binding

__all__ = ["ProxyConfig"]


@dataclass(frozen=True)
class ProxyConfig:
    """The proxy's upstream, auth and limits (module docstring)."""

    upstream: str
    upstream_api_key: str | None = None
    token: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    max_episodes: int = 1024
    max_body_bytes: int = 8 * 2**20
    request_timeout: float = 600.0
    tokenizer: str | None = None
    token_in: bool = True
    idle_timeout: float = 300.0

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise UserError(f"--upstream must be an http(s) base URL, not {self.upstream!r}")
        if self.idle_timeout <= 0:
            raise UserError("--idle-timeout must be > 0 seconds (the reaper cannot be disabled)")
        if self.max_episodes < 1 or self.max_body_bytes < 1024 or self.request_timeout <= 0:
            raise UserError("proxy limits must be positive (max body >= 1024 bytes)")
        if self.token is not None and len(self.token) < 8:
            raise UserError("the token must be at least 8 characters")
        check_binding(self.host, self.token)
